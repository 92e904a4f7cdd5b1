-- The active parts of each table of the service's database, in order: a table whose parts are
-- the ones its copy was made of needs no new copy (api/sql/freeze.ts).
SELECT table, arrayStringConcat(arraySort(groupArray(name)), ',') AS parts
FROM system.parts
WHERE database = {db:String} AND active
GROUP BY table
