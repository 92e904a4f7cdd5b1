-- The active parts of each table of the service's database, with their directories: a table
-- whose parts are the ones its copy was made of needs no new copy, and the analysts' process
-- links the others' files (api/sql/generations.ts).
SELECT table, name, path
FROM system.parts
WHERE database = {db:String} AND active
ORDER BY table, name
