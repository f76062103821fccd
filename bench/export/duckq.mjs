// duckq.mjs SQL - run SQL in DuckDB (npm @duckdb/node-api under $NPM) on
// one thread, three times; print "CPU_SECONDS ROWS" of the best run, then
// the result rows as CSV (for the caller to compare).
const { DuckDBInstance } = await import(process.env.NPM + '/node_modules/@duckdb/node-api/lib/index.js');
const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await inst.connect();
let best = Infinity, rows = [];
for (let i = 0; i < 3; i++) {
  const t0 = process.cpuUsage();
  const r = await con.runAndReadAll(process.argv[2]);
  const t = process.cpuUsage(t0);
  best = Math.min(best, (t.user + t.system) / 1e6);
  rows = r.getRowsJson();
}
console.log(best.toFixed(4), rows.length);
for (const r of rows) console.log(r.join(','));
