// A strict offline check of Kubernetes manifests, as a bank's CI runs kubeconform -strict: each object against the
// Kubernetes API's schema of its apiVersion and kind (kubernetes-models: the API's OpenAPI schemas compiled to
// validators — types, required fields, enums, formats), and no field the schema does not name (kubectl's strict
// field validation). The validator reads every field its schema names: a field of the manifest it never read is one
// the API does not know (a typo, a field of another level, a field of a newer API).
import { readFile } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';

// biome-ignore lint/suspicious/noExplicitAny: a manifest of any shape
type Json = any;
interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
}
type Validate = ((data: Json) => boolean) & { errors?: SchemaError[] | null };

/** The name of the compiled schema of an apiVersion and kind: `batch/v1` CronJob → IoK8sApiBatchV1CronJob. */
export function schemaName(apiVersion: string, kind: string): string {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['core', apiVersion];
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  const groupPart = group!
    .replace(/\.k8s\.io$/, '')
    .split('.')
    .map(cap)
    .join('');
  return `IoK8sApi${groupPart}${cap(version!)}${kind}`;
}

async function validatorOf(apiVersion: string, kind: string): Promise<Validate> {
  const name = schemaName(apiVersion, kind);
  try {
    return ((await import(`kubernetes-models/_schemas/${name}`)) as { validate: Validate }).validate;
  } catch {
    throw new Error(`no schema for ${apiVersion} ${kind} (${name})`);
  }
}

/** The object seen through proxies that note each field read, at its JSON pointer. */
function watched(value: Json, path: string, read: Set<string>): Json {
  if (value === null || typeof value !== 'object') return value;
  return new Proxy(value, {
    get(target, key, receiver) {
      const v = Reflect.get(target, key, receiver);
      if (typeof key !== 'string' || !Object.hasOwn(target, key)) return v;
      const at = `${path}/${key}`;
      read.add(at);
      return watched(v, at, read);
    },
  });
}

/** Every field of the object (by JSON pointer) no schema read. */
function unread(value: Json, path: string, read: Set<string>, out: string[]): string[] {
  if (value === null || typeof value !== 'object') return out;
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}/${key}`;
    if (!read.has(at)) out.push(at);
    else unread(v, at, read, out);
  }
  return out;
}

/** The problems of one object (empty: valid), each `/json/pointer: message`. */
export async function checkObject(obj: Json): Promise<string[]> {
  if (!obj || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string')
    return ['an object without apiVersion and kind'];
  const validate = await validatorOf(obj.apiVersion, obj.kind);
  const read = new Set<string>(['/apiVersion', '/kind']);
  const problems: string[] = [];
  if (!validate(watched(obj, '', read)))
    for (const e of validate.errors ?? [])
      problems.push(`${e.instancePath || '/'}: ${e.keyword} ${JSON.stringify(e.params)}`);
  for (const at of unread(obj, '', read, [])) problems.push(`${at}: a field the API does not define`);
  return problems;
}

/** Each object of a manifest file (YAML, several documents), with its problems. */
export async function checkManifestFile(
  file: string,
): Promise<Array<{ kind: string; name: string; problems: string[] }>> {
  const docs = parseAllDocuments(await readFile(file, 'utf8'));
  const out = [];
  for (const d of docs) {
    if (d.errors.length > 0) {
      out.push({ kind: '?', name: '?', problems: d.errors.map((e) => `YAML: ${e.message}`) });
      continue;
    }
    const obj = d.toJS({ maxAliasCount: 0 }) as Json;
    if (obj === null) continue;
    out.push({ kind: String(obj.kind), name: String(obj.metadata?.name), problems: await checkObject(obj) });
  }
  return out;
}
