-- Every table, view and materialized view of the service's database that the analysts' copy
-- holds (api/sql/generations.ts): all but the temporary and the snapshot tables (store/snapshots.ts).
SELECT name, engine, toString(uuid) AS uuid, create_table_query AS create
FROM system.tables
WHERE database = {db:String}
  AND NOT is_temporary
  AND NOT arrayExists(p -> startsWith(name, p), {snapshots:Array(String)})
ORDER BY name
