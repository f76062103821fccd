// pq_meta.mjs FILE.parquet - a Parquet footer as hyparquet reads it:
// "created_by TEXT", then "enc COLUMN ENCODING,..." for each column chunk
// of the first row group.
import { readFileSync } from 'fs';
const { parquetMetadata } = await import(process.env.NPM + '/node_modules/hyparquet/src/index.js');
const b = readFileSync(process.argv[2]);
const md = parquetMetadata(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const out = ['created_by ' + md.created_by];
for (const cc of md.row_groups[0]?.columns ?? [])
  out.push(`enc ${cc.meta_data.path_in_schema.join('.')} ${cc.meta_data.encodings.join(',')}`);
process.stdout.write(out.join('\n') + '\n');
