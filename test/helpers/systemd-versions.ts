// What each systemd version makes of the shipped units: the tables of docs/install.md, "systemd versions" (each
// setting's first version and what an older one does with it; the platforms and their systemd), the features a unit
// uses (its settings, the values and prefixes with a version of their own, its specifiers), and a unit as a given
// version loads it — the settings it does not know dropped, an Environment= with a specifier it cannot resolve
// dropped whole (systemd: "Failed to resolve unit specifiers …, ignoring"), or not loaded at all.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.ts';
import { type Unit, type UnitEntry, unitOf } from './systemd-unit.ts';

export interface Row {
  /** The first version that has it (219 for "≤ 219"). */
  since: number;
  /** What an older systemd does: '—' (none is that old), 'ignored…', 'refused…'. */
  older: string;
}

/** The lines of docs/install.md's table that follows `marker` (a heading or an HTML comment), header excluded. */
function tableAfter(marker: string): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/install.md'), 'utf8');
  const at = doc.indexOf(marker);
  if (at < 0) throw new Error(`docs/install.md: no ${marker}`);
  const lines = doc.slice(at).split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const l of lines.slice(first + 2)) {
    if (!l.startsWith('|')) break;
    rows.push(
      l
        .slice(1, -1)
        .split(' | ')
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** The settings table: each feature (`Type=oneshot with Restart=on-failure`, `ExecStartPre=+`, `%d`…) → its row. */
export function versionTable(): Map<string, Row> {
  const out = new Map<string, Row>();
  for (const [names, since, older] of tableAfter('<!-- systemd-versions -->')) {
    const row = { since: Number(/\d+/.exec(since ?? '')?.[0]), older: older ?? '' };
    // A name is a code span; "`Type=oneshot` with `Restart=on-failure`" is one feature.
    const combined = /^`([^`]+)` with `([^`]+)`/.exec(names ?? '');
    if (combined) out.set(`${combined[1]} with ${combined[2]}`, row);
    else for (const m of (names ?? '').matchAll(/`([^`]+)`/g)) out.set(m[1]!, row);
  }
  return out;
}

/** The platforms table: each platform and the oldest systemd it has. */
export function platforms(): Array<{ name: string; systemd: number }> {
  return tableAfter('| platform | systemd |').map(([name, systemd]) => ({
    name: name!,
    systemd: Number(/\d+/.exec(systemd ?? '')?.[0]),
  }));
}

/** The features of one entry: its setting, and the values, prefixes and specifiers with a version of their own. */
function entryFeatures(e: UnitEntry): string[] {
  const out = [`${e.key}=`];
  if (e.key === 'ProtectSystem' && e.value === 'strict') out.push('ProtectSystem=strict');
  if (e.key === 'KillMode' && e.value === 'mixed') out.push('KillMode=mixed');
  if (e.key.startsWith('Exec') && e.value.startsWith('+')) out.push(`${e.key}=+`);
  for (const m of e.value.matchAll(/%(.)/g)) out.push(`%${m[1]}`);
  return out;
}

/** Every feature a unit uses (see entryFeatures), and `Type=oneshot with Restart=on-failure` where it applies. */
export function features(unit: Unit): Set<string> {
  const out = new Set(unit.entries.flatMap(entryFeatures));
  if (unit.get('Type') === 'oneshot' && (unit.get('Restart') ?? 'no') !== 'no')
    out.add(`Type=oneshot with Restart=${unit.get('Restart')}`);
  return out;
}

/** The unit and its drop-ins, merged as systemd merges them (the drop-ins' entries after the unit's). */
export function withDropIns(name: string, unit: string, ...dropIns: string[]): Unit {
  return unitOf(name, [unit, ...dropIns].join('\n'));
}

export type AsLoaded = { loads: true; unit: Unit } | { loads: false; why: string };

/**
 * The unit as systemd `version` loads it: refused when it uses a feature that an older version refuses; else without
 * the entries it does not know, and without an Environment= whose specifiers it cannot resolve.
 */
export function asSystemd(unit: Unit, version: number, table = versionTable()): AsLoaded {
  const tooNew = (f: string) => {
    const row = table.get(f);
    if (!row) throw new Error(`${f}: not in docs/install.md's systemd versions table`);
    return row.since > version ? row : null;
  };
  for (const f of features(unit)) {
    const row = tooNew(f);
    if (row?.older.startsWith('refused')) return { loads: false, why: `${f} needs systemd ${row.since}` };
  }
  const kept = unit.entries.filter((e) => {
    if (tooNew(`${e.key}=`)) return false;
    if (e.key.startsWith('Exec') && e.value.startsWith('+') && tooNew(`${e.key}=+`)) return false;
    return ![...e.value.matchAll(/%(.)/g)].some((m) => tooNew(`%${m[1]}`));
  });
  const text = kept.map((e) => `[${e.section}]\n${e.key}=${e.value}`).join('\n');
  return { loads: true, unit: unitOf(unit.name, text) };
}

/** The drop-in the packages add below systemd 247 (deploy/systemd/svc-ingest-before-247.conf). */
export const BEFORE_247 = join(ROOT, 'deploy/systemd/svc-ingest-before-247.conf');

/** The service as the packages leave it on systemd `version`: the unit, and the drop-in below 247. */
export function installedUnit(unitText: string, version: number): Unit {
  const dropIns = version < 247 ? [readFileSync(BEFORE_247, 'utf8')] : [];
  return withDropIns('svc-ingest.service', unitText, ...dropIns);
}
