// duckscale.mjs DATASET SQL - run SQL in DuckDB (npm @duckdb/node-api under
// $NPM, two threads: the thread count dtreport has on this machine) over
// the Parquet dataset DATASET, whose tables are views named as dtreport
// sql's (events, frames, ...).  Runs it three times; prints the best wall
// seconds and the row count, then the rows as CSV for the caller to
// compare with dtreport's.
const { DuckDBInstance } = await import(process.env.NPM + '/node_modules/@duckdb/node-api/lib/index.js');
const [ds, sql] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const con = await inst.connect();
for (const t of ['events', 'frames', 'stacks', 'probes'])
  await con.run(`CREATE VIEW ${t} AS SELECT * FROM read_parquet('${ds}/${t}/**/*.parquet')`);
let best = Infinity, rows = [];
for (let i = 0; i < 3; i++) {
  const t0 = performance.now();
  const r = await con.runAndReadAll(sql);
  best = Math.min(best, (performance.now() - t0) / 1e3);
  rows = r.getRowsJson();
}
console.log(best.toFixed(4), rows.length);
for (const r of rows) console.log(r.join(','));
