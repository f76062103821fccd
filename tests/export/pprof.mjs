// pprof.mjs FILE.pb.gz - decode a gzip'd profile.proto with npm
// pprof-format (independent of dt's encoder) and print "total N" and the
// per-function inclusive sample totals ("NAME<TAB>N", sorted), like
// folded_totals.py; then on stderr facts the test checks: sample types,
// period, and whether every location's mapping and function exist.
import { readFileSync } from 'fs';
import { gunzipSync } from 'zlib';
const { Profile } = await import(process.env.NPM + '/node_modules/pprof-format/dist/esm/index.js');
const p = Profile.decode(gunzipSync(readFileSync(process.argv[2])));
const S = (i) => p.stringTable.strings[Number(i)];
const fn = new Map(p.function.map((f) => [String(f.id), S(f.name)]));
const maps = new Set(p.mapping.map((m) => String(m.id)));
let dangling = 0;
const loc = new Map(p.location.map((l) => {
  if (Number(l.mappingId) !== 0 && !maps.has(String(l.mappingId))) dangling++;
  if (!fn.has(String(l.line[0].functionId))) dangling++;
  return [String(l.id), fn.get(String(l.line[0].functionId))];
}));
const tot = new Map();
let n = 0n;
for (const s of p.sample) {
  const v = BigInt(s.value[0]);
  n += v;
  for (const id of s.locationId) if (!loc.has(String(id))) dangling++;
  const seen = new Set(s.locationId.map((id) => loc.get(String(id))));
  for (const f of seen) tot.set(f, (tot.get(f) || 0n) + v);
}
const out = ['total ' + n];
for (const [f, v] of [...tot].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) out.push(f + '\t' + v);
process.stdout.write(out.join('\n') + '\n');
const types = p.sampleType.map((t) => S(t.type) + '/' + S(t.unit)).join(',');
const labels = new Set(p.sample.flatMap((s) => s.label.map((l) => S(l.key))));
process.stderr.write(`types ${types}\nperiod ${p.period}\nmappings ${p.mapping.length}\ndangling ${dangling}\nlabels ${[...labels].sort().join(',')}\n`);
