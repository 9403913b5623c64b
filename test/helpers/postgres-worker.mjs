// The PGlite PostgreSQL of test/helpers/postgres.ts, on a thread of its own: PGlite loads its parts with
// import(), which jest's module sandbox refuses, and a worker thread loads modules as Node does. It also
// keeps PostgreSQL's work off the test's event loop. Requests that come while PostgreSQL starts wait in
// the port's queue: the listener is attached once it is up.
import {setFlagsFromString} from 'v8';
import {parentPort} from 'worker_threads';

// PostgreSQL's WebAssembly compiled by V8's baseline compiler only: optimising it cost about 2 s of CPU
// per start (5.5 s instead of 3.5 s), more than the few small queries of a test ever gain back. The
// flag is the process's; the jest worker compiles no other WebAssembly of weight.
setFlagsFromString('--liftoff-only');
const {PGlite} = await import('@electric-sql/pglite');

const db = await PGlite.create();

/** A query's rows as one JSON array, made by PostgreSQL: the values are as its JSON renders them. */
const asJson = (query) => `SELECT coalesce(json_agg(q), '[]') AS rows FROM (${query}) q`;

parentPort.on('message', async ({id, op, schema, text}) => {
  // One simple query: its statements run as one transaction, in the request's own schema.
  const sql = `SET search_path TO ${schema};\n${op === 'rows' ? asJson(text) : text}`;
  try {
    const rows = (await db.exec(sql)).flatMap((result) => result.rows);
    parentPort.postMessage({id, result: op === 'rows' ? rows[0].rows : rows});
  } catch (error) {
    const {message, detail, hint, position} = error;
    const at = Number(position) - 1;
    const near = position ? `, near: ${sql.slice(Math.max(0, at - 60), at + 60)}` : '';
    parentPort.postMessage({id, error: [message, detail, hint].filter(Boolean).join('; ') + near});
  }
});
