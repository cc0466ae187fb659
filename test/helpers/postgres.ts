/** The throwaway PostgreSQL server of the database-source tests (scripts/pg-cluster.ts, shared with the benchmark). */
export { freePort, giveToServer, PG_SUPERUSER_PASSWORD, postgresBin, startPgbouncer, startPostgres, type TestPooler, type TestPostgres, type TestPostgresOptions } from '../../scripts/pg-cluster.js';
