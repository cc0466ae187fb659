import { DuckDBInstance } from '@duckdb/node-api';
const c = await (await DuckDBInstance.create(':memory:')).connect();
const [a,b]=process.argv.slice(2);
for (const q of [`SELECT count(*) FROM read_parquet('${a}')`,`SELECT count(*) FROM read_parquet('${b}')`,`SELECT count(*) FROM (SELECT * FROM read_parquet('${a}') EXCEPT ALL SELECT * FROM read_parquet('${b}'))`,`SELECT count(*) FROM (SELECT * FROM read_parquet('${b}') EXCEPT ALL SELECT * FROM read_parquet('${a}'))`,
`SELECT count(*) FROM (SELECT __row, row_number() over () rn FROM read_parquet('${a}')) WHERE __row<>rn`,`SELECT count(*) FROM (SELECT __row, row_number() over () rn FROM read_parquet('${b}')) WHERE __row<>rn`])
  console.log(q.slice(0,60), (await c.runAndReadAll(q)).getRows());
