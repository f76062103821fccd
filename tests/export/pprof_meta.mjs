// pprof_meta.mjs FILE.pb.gz - decode a profile with npm pprof-format and
// print what `go tool pprof` takes from its mappings and frames: the first
// mapping's file ("main FILE"), each mapping's build id ("map FILE ID",
// sorted) and the samples whose stack holds a "[truncated]" frame
// ("truncated N").
import { readFileSync } from 'fs';
import { gunzipSync } from 'zlib';
const { Profile } = await import(process.env.NPM + '/node_modules/pprof-format/dist/esm/index.js');
const p = Profile.decode(gunzipSync(readFileSync(process.argv[2])));
const S = (i) => p.stringTable.strings[Number(i)];
const out = ['main ' + (p.mapping.length ? S(p.mapping[0].filename) : '-')];
out.push(...p.mapping.map((m) => `map ${S(m.filename)} ${S(m.buildId) || '-'}`).sort());
const fn = new Map(p.function.map((f) => [String(f.id), S(f.name)]));
const loc = new Map(p.location.map((l) => [String(l.id), fn.get(String(l.line[0].functionId))]));
let trunc = 0n;
for (const s of p.sample)
  if (s.locationId.some((id) => loc.get(String(id)) === '[truncated]')) trunc += BigInt(s.value[0]);
out.push('truncated ' + trunc);
process.stdout.write(out.join('\n') + '\n');
