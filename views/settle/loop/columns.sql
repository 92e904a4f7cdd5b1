-- The columns the settle writes of each metrics table, from the table itself (its migration is
-- their one definition): every column but version and deleted, which views/settle.ts sets.
SELECT table, groupArray(name) AS columns FROM system.columns
WHERE database = {db:String} AND table IN {tables:Array(String)} AND name NOT IN ('version', 'deleted')
GROUP BY table
