// hyp.mjs FILE.parquet - read every column of every row with hyparquet
// (a reader that shares no code with DuckDB) and print the table as CSV
// like `dtreport sql --csv 'SELECT * FROM t'`: a header, then the rows.
// Also checks each column chunk's min/max statistics against its values.
import { readFileSync } from 'fs';
const { parquetReadObjects, parquetMetadata, parquetSchema } = await import(process.env.NPM + '/node_modules/hyparquet/src/index.js');
const { compressors } = await import(process.env.NPM + '/node_modules/hyparquet-compressors/src/index.js');
const b = readFileSync(process.argv[2]);
const file = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
const md = parquetMetadata(file);
const names = parquetSchema(md).children.map((c) => c.element.name);
const rows = await parquetReadObjects({ file, compressors });
if (BigInt(rows.length) !== BigInt(md.num_rows)) throw new Error(`rows ${rows.length} != footer ${md.num_rows}`);
const field = (v) => {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[,"\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
};
const out = [names.map(field).join(',')];
for (const r of rows) out.push(names.map((n) => field(r[n])).join(','));
process.stdout.write(out.join('\n') + '\n');
// statistics: every row group's min/max/null_count equal its values
let at = 0;
for (const [g, rg] of md.row_groups.entries()) {
  const n = Number(rg.num_rows);
  rg.columns.forEach((cc, ci) => {
    const st = cc.meta_data.statistics;
    const name = names[ci];
    let mn = null, mx = null, nulls = 0;
    for (let i = at; i < at + n; i++) {
      const v = rows[i][name];
      if (v === null || v === undefined) { nulls++; continue; }
      if (mn === null || v < mn) mn = v;
      if (mx === null || v > mx) mx = v;
    }
    const eq = (a, b) => (a === null && b === undefined) || String(a) === String(b);
    if (!st || Number(st.null_count) !== nulls || !eq(mn, st.min_value) || !eq(mx, st.max_value))
      throw new Error(`row group ${g} column ${name}: statistics ${JSON.stringify(st, (k, v) => typeof v === 'bigint' ? String(v) : v)} but values min ${mn} max ${mx} nulls ${nulls}`);
  });
  at += n;
}
process.stderr.write(`row_groups ${md.row_groups.length}\n`);
