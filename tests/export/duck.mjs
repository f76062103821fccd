// duck.mjs SQL... - run each statement in DuckDB (the @duckdb/node-api
// engine, installed under $NPM) and print its rows as CSV the way
// `dtreport sql --csv` does (no header, NULL empty, strings quoted only
// when they hold , " CR or LF), results separated by a blank line.
const { DuckDBInstance } = await import(process.env.NPM + '/node_modules/@duckdb/node-api/lib/index.js');
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
const field = (v) => {
  if (v === null || v === undefined) return '';
  const s = String(v);
  return /[,"\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
};
let first = true;
for (const q of process.argv.slice(2)) {
  const r = await con.runAndReadAll(q);
  if (!first) process.stdout.write('\n');
  first = false;
  for (const row of r.getRowsJson()) process.stdout.write(row.map(field).join(',') + '\n');
}
