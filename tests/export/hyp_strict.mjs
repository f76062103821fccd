// hyp_strict.mjs FILE.parquet WANT - read every row with hyparquet, its
// strings decoded by a fatal TextDecoder (hyparquet's own decoder would
// turn a bad byte into U+FFFD and hide it), and exit 1 unless every string
// is valid UTF-8 and some string equals WANT.
import { readFileSync } from 'fs';
const { parquetReadObjects } = await import(process.env.NPM + '/node_modules/hyparquet/src/index.js');
const { compressors } = await import(process.env.NPM + '/node_modules/hyparquet-compressors/src/index.js');
const b = readFileSync(process.argv[2]);
const file = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
const fatal = new TextDecoder('utf-8', { fatal: true });
let strings = 0;
const parsers = { stringFromBytes: (v) => { if (!v) return v; strings++; return fatal.decode(v); } };
const rows = await parquetReadObjects({ file, compressors, parsers });
const found = rows.some((r) => Object.values(r).some((v) => v === process.argv[3]));
if (!found) { console.log(`${rows.length} rows, ${strings} strings, valid, but none is ${process.argv[3]}`); process.exit(1); }
