// Every manifest in deploy/kubernetes/ passes a strict offline check against the Kubernetes API's schemas
// (test/helpers/k8s-schema.ts: kubernetes-models' validators of the API's OpenAPI schemas, and no field the schema
// does not define), as a bank's CI checks them before they reach a cluster; and the check does refuse what it must.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/cli.ts';
import { checkManifestFile, checkObject } from '../helpers/k8s-schema.ts';

const DIR = join(ROOT, 'deploy/kubernetes');

// biome-ignore lint/suspicious/noExplicitAny: a manifest of any shape
type Json = any;

/** Every `onPodConditions` pattern of an object, wherever it is. */
function podConditionPatterns(o: Json): Json[] {
  if (o === null || typeof o !== 'object') return [];
  const own = Array.isArray(o.onPodConditions) ? o.onPodConditions : [];
  return [...own, ...Object.values(o).flatMap(podConditionPatterns)];
}

describe('deploy/kubernetes/', async () => {
  const files = (await readdir(DIR)).filter((f) => /\.ya?ml$/.test(f)).sort();

  it('holds the CronJob, the Secret and the backfill Jobs', () => {
    expect(files).toEqual([
      'svc-ingest-backfill-job.yaml',
      'svc-ingest-backfill-plan.yaml',
      'svc-ingest-cronjob.yaml',
      'svc-ingest-secret.yaml',
    ]);
  });

  it.each(files)('%s: every object valid against the API schema, no unknown field', async (file) => {
    const objects = await checkManifestFile(join(DIR, file));
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) expect(o.problems, `${file}: ${o.kind} ${o.name}`).toEqual([]);
  });

  it('every claim and Secret the pods name is written out here', async () => {
    const all = (await Promise.all(files.map((f) => checkManifestFile(join(DIR, f))))).flat();
    const declared = new Set(all.map((o) => `${o.kind}/${o.name}`));
    for (const f of files) {
      const docs = parseAllDocuments(await readFile(join(DIR, f), 'utf8')).map((d) => d.toJS() as Json);
      for (const o of docs) {
        const pod = o.spec?.jobTemplate?.spec?.template?.spec ?? o.spec?.template?.spec;
        if (!pod) continue;
        for (const v of pod.volumes ?? []) {
          if (v.persistentVolumeClaim)
            expect(declared, `${f}: claim ${v.persistentVolumeClaim.claimName}`).toContain(
              `PersistentVolumeClaim/${v.persistentVolumeClaim.claimName}`,
            );
          if (v.secret)
            expect(declared, `${f}: Secret ${v.secret.secretName}`).toContain(
              `Secret/${v.secret.secretName}`,
            );
        }
        for (const c of pod.containers)
          for (const e of c.env ?? [])
            if (e.valueFrom?.secretKeyRef)
              expect(declared, `${f}: Secret ${e.valueFrom.secretKeyRef.name}`).toContain(
                `Secret/${e.valueFrom.secretKeyRef.name}`,
              );
        // Older schemas (kubeconform's default versions) require a pod condition pattern's status.
        for (const p of podConditionPatterns(o))
          expect(p.status, `${f}: onPodConditions ${p.type}`).toBe('True');
      }
    }
  });

  it('every pod runs the image the CronJob names (make image writes it; a release moves its tag)', async () => {
    const images = new Map<string, string>();
    for (const f of files)
      for (const o of parseAllDocuments(await readFile(join(DIR, f), 'utf8')).map((d) => d.toJS() as Json)) {
        const pod = o.spec?.jobTemplate?.spec?.template?.spec ?? o.spec?.template?.spec;
        for (const c of pod?.containers ?? []) images.set(`${f} ${c.name}`, c.image);
      }
    expect(images.size).toBe(3);
    expect(new Set(images.values())).toEqual(new Set([images.get('svc-ingest-cronjob.yaml svc-ingest')]));
  });

  it('the check refuses an unknown field, a wrong enum, a missing required field, an unknown kind', async () => {
    const job = (spec: Json) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'x' }, spec });
    const template = { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'b' }] } };
    expect(await checkObject(job({ template }))).toEqual([]);
    expect(await checkObject(job({ template, backofLimit: 3 }))).toEqual([
      '/spec/backofLimit: a field the API does not define',
    ]);
    expect(
      await checkObject(
        job({
          template: { spec: { ...template.spec, containers: [{ name: 'a', image: 'b', commands: [] }] } },
        }),
      ),
    ).toEqual(['/spec/template/spec/containers/0/commands: a field the API does not define']);
    expect((await checkObject(job({ template, completionMode: 'Indexd' }))).join('\n')).toMatch(
      /^\/spec\/completionMode: /,
    );
    expect((await checkObject(job({}))).join('\n')).toMatch(/template/);
    expect((await checkObject(job({ template, parallelism: '2' }))).join('\n')).toMatch(
      /^\/spec\/parallelism: /,
    );
    await expect(checkObject({ apiVersion: 'batch/v1', kind: 'CronJobs', metadata: {} })).rejects.toThrow(
      /no schema for batch\/v1 CronJobs/,
    );
  });
});
