// A Kubernetes CronJob's container run the way the kubelet runs it, on a machine without Kubernetes: its
// `command` (the image's `svc-ingest` is the launcher of the CLI built as the npm package installs it), `env`, the
// pod's and the container's securityContext (runAsUser/runAsGroup, fsGroup as a supplementary group and the
// volumes' group, no privilege escalation, no capability, a read-only root file system) and its volumeMounts, in a
// mount namespace (isolate.ts). Its exit status is judged by the Job's podFailurePolicy and backoffLimit.
import { chmod, chown, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type Bind, type IsolatedResult, LAUNCHER_INSIDE, runIsolated } from './isolate.ts';

// biome-ignore lint/suspicious/noExplicitAny: a manifest of any shape, read member by member
export type Manifest = Record<string, any>;

/** The CronJob of a manifest file's text. */
export function cronJobOf(text: string): Manifest {
  const objects = parseAllDocuments(text).map((d) => d.toJS()) as Manifest[];
  const cron = objects.find((o) => o.kind === 'CronJob');
  if (!cron) throw new Error('no CronJob in the manifest');
  return cron;
}

export const containerOf = (cron: Manifest): Manifest =>
  cron.spec.jobTemplate.spec.template.spec.containers[0];

/** What the emulation does not apply, and why (the test prints it). */
export const NOT_APPLIED_K8S: Record<string, string> = {
  image:
    "the CLI built as the npm package installs it runs instead of the image's svc-ingest (the image is built elsewhere)",
  'env valueFrom':
    'no Secret store here: an env value from a Secret is not applied (the manifest takes none)',
  'seccompProfile RuntimeDefault': 'a seccomp filter: not emulated',
  resources: 'no cgroup limits: not emulated',
  terminationGracePeriodSeconds: 'no stop in these scenarios',
  schedule: 'the test starts each Job itself',
};

export interface PodMachine {
  /** The temporary root (isolate.ts). */
  root: string;
  /** Each volume's folder on the machine, by volume name (a PVC's, a Secret's files, an emptyDir). */
  volumes: Record<string, string>;
  /** What the test changes in the container's env (the simulator's URL for the base URL), as a patch would. */
  envPatch: Record<string, string>;
}

/** Makes the volumes' folders as the kubelet would: fsGroup owns them (setgid); a Secret's files 0440 root:fsGroup. */
export async function prepareVolumes(
  cron: Manifest,
  m: PodMachine,
  secrets: Record<string, string>,
): Promise<void> {
  const pod = cron.spec.jobTemplate.spec.template.spec;
  const fsGroup: number = pod.securityContext.fsGroup;
  for (const v of pod.volumes as Manifest[]) {
    const dir = m.volumes[v.name];
    if (!dir) throw new Error(`volume ${v.name}: no folder given`);
    await mkdir(dir, { recursive: true });
    if (v.secret) {
      for (const item of v.secret.items as Array<{ key: string; path: string }>) {
        const file = join(dir, item.path);
        await writeFile(file, secrets[item.key] ?? '');
        await chown(file, 0, fsGroup);
        // defaultMode, with the group's read bit fsGroup adds.
        await chmod(file, (v.secret.defaultMode ?? 0o644) | 0o040);
      }
      await chmod(dir, 0o755);
    } else if (v.emptyDir) {
      await chmod(dir, 0o777);
    } else {
      await chown(dir, 0, fsGroup);
      await chmod(dir, 0o2775);
    }
  }
}

/** Runs the container's command once, as the kubelet would start it in a pod of the Job. */
export async function runContainer(
  cron: Manifest,
  m: PodMachine,
  timeoutMs = 30_000,
): Promise<IsolatedResult> {
  const pod = cron.spec.jobTemplate.spec.template.spec;
  const c = containerOf(cron);
  const psc = pod.securityContext ?? {};
  const csc = c.securityContext ?? {};
  const uid: number = csc.runAsUser ?? psc.runAsUser;
  const gid: number = csc.runAsGroup ?? psc.runAsGroup ?? 0;
  if ((csc.runAsNonRoot ?? psc.runAsNonRoot) && !uid) throw new Error('runAsNonRoot with no non-root user');
  const readOnlyVolume = new Set(
    (pod.volumes as Manifest[])
      .filter((v) => v.secret || v.persistentVolumeClaim?.readOnly)
      .map((v) => v.name as string),
  );
  const binds: Bind[] = (c.volumeMounts as Manifest[]).map((vm) => ({
    from: m.volumes[vm.name]!,
    to: vm.mountPath,
    rw: !vm.readOnly && !readOnlyVolume.has(vm.name),
  }));
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOSTNAME: `${cron.metadata.name}-29000000-abcde`,
    // No passwd entry for the uid in the image: HOME is /.
    HOME: '/',
  };
  for (const e of (c.env ?? []) as Array<{ name: string; value?: string }>)
    if (e.value !== undefined) env[e.name] = e.value;
  Object.assign(env, m.envPatch);
  const command = [...(c.command as string[]), ...((c.args ?? []) as string[])];
  if (command[0] !== 'svc-ingest') throw new Error(`the container runs ${command[0]}, not svc-ingest`);
  const drops = csc.capabilities?.drop ?? [];
  return runIsolated({
    root: m.root,
    argv: [LAUNCHER_INSIDE, ...command.slice(1)],
    env,
    uid,
    gid,
    groups: psc.fsGroup !== undefined ? [psc.fsGroup] : [],
    umask: 0o022,
    cwd: c.workingDir ?? '/',
    binds,
    readOnly: csc.readOnlyRootFilesystem === true,
    privateTmp: false,
    noNewPrivileges: csc.allowPrivilegeEscalation === false && drops.includes('ALL'),
    timeoutMs,
  });
}

/**
 * What the Job makes of a pod that ended with `code` (no disruption condition): success, another pod
 * (Count: within backoffLimit, or backoffLimitPerIndex for an index; Ignore: not counted), or the Job (FailJob) or
 * the pod's index (FailIndex) failed. A Job that is not a CronJob's: `{ spec: { jobTemplate: job } }`.
 */
export function judgePod(cron: Manifest, code: number): 'success' | 'restart' | 'failure' {
  if (code === 0) return 'success';
  const c = containerOf(cron);
  const rules = (cron.spec.jobTemplate.spec.podFailurePolicy?.rules ?? []) as Manifest[];
  for (const r of rules) {
    const on = r.onExitCodes;
    if (!on) continue;
    if (on.containerName && on.containerName !== c.name) continue;
    const listed = (on.values as number[]).includes(code);
    if (on.operator === 'In' ? !listed : listed) continue;
    if (r.action === 'FailJob' || r.action === 'FailIndex') return 'failure';
    return 'restart';
  }
  const job = cron.spec.jobTemplate.spec;
  return (job.backoffLimitPerIndex ?? job.backoffLimit) > 0 ? 'restart' : 'failure';
}

/** The rule a pod stopped by a node drain or preemption meets first: Ignore (another pod, not counted)? */
export function drainIgnored(cron: Manifest): boolean {
  const rules = (cron.spec.jobTemplate.spec.podFailurePolicy?.rules ?? []) as Manifest[];
  const first = rules.find(
    (r) => r.onPodConditions?.some((p: Manifest) => p.type === 'DisruptionTarget') || r.onExitCodes,
  );
  return first?.action === 'Ignore' && first.onPodConditions !== undefined;
}

/** The Job named `name` (or the only Job) of a manifest file's text. */
export function jobOf(text: string, name?: string): Manifest {
  const objects = parseAllDocuments(text).map((d) => d.toJS()) as Manifest[];
  const jobs = objects.filter((o) => o.kind === 'Job' && (name === undefined || o.metadata.name === name));
  if (jobs.length !== 1) throw new Error(`${jobs.length} Job(s) named ${name ?? '(any)'} in the manifest`);
  return jobs[0]!;
}

/**
 * `$(VAR)` in a command, an argument or an env value, as the kubelet expands it: from the variables given; `$$` is a
 * literal `$`; a reference to a variable not given stays as written.
 */
export function expandK8s(text: string, vars: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (all, name?: string) =>
    name === undefined ? '$' : (vars[name] ?? all),
  );
}

export interface PodRun {
  /** The Job's pod's index (JOB_COMPLETION_INDEX, as the Job controller sets it in an Indexed Job's pods). */
  index?: number;
  /** The Secrets' values by key (secretKeyRef). */
  secrets: Record<string, string>;
  /** Each mount path of the container, by volume name, as a folder on this machine. */
  volumes: Record<string, string>;
  /** What the test changes in the container's env (the simulator's URL), as a kustomize patch would. */
  envPatch?: Record<string, string>;
}

/**
 * The argv (less the image's `svc-ingest`) and env of a Job's container as its pod would run them: env from values
 * and secretKeyRefs (each expanded by those before it), JOB_COMPLETION_INDEX for an Indexed Job's pod, `$(VAR)`
 * expanded in the command and args; then every path under a volume's mount path moved to that volume's folder here.
 */
export function podCommand(job: Manifest, run: PodRun): { args: string[]; env: Record<string, string> } {
  const c = job.spec.template.spec.containers[0] as Manifest;
  const env: Record<string, string> = {};
  if (run.index !== undefined) env.JOB_COMPLETION_INDEX = String(run.index);
  for (const e of (c.env ?? []) as Manifest[]) {
    if (e.value !== undefined) env[e.name] = expandK8s(String(e.value), env);
    else if (e.valueFrom?.secretKeyRef) {
      const key: string = e.valueFrom.secretKeyRef.key;
      if (!(key in run.secrets)) throw new Error(`env ${e.name}: no Secret key ${key} given`);
      env[e.name] = run.secrets[key]!;
    } else throw new Error(`env ${e.name}: a source the test does not emulate`);
  }
  Object.assign(env, run.envPatch);
  const argv = [...(c.command as string[]), ...((c.args ?? []) as string[])].map((a) => expandK8s(a, env));
  if (argv[0] !== 'svc-ingest') throw new Error(`the container runs ${argv[0]}, not svc-ingest`);
  const mounts = ((c.volumeMounts ?? []) as Manifest[]).map((m) => {
    const dir = run.volumes[m.name];
    if (!dir) throw new Error(`volume ${m.name}: no folder given`);
    return { from: m.mountPath as string, to: dir };
  });
  const here = (value: string) => {
    const m = mounts.find((v) => value === v.from || value.startsWith(`${v.from}/`));
    return m ? m.to + value.slice(m.from.length) : value;
  };
  for (const k of Object.keys(env)) env[k] = here(env[k]!);
  return { args: argv.slice(1).map(here), env };
}
