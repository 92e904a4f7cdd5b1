-- Where the service's engine keeps its data: freezes land under its shadow/ (api/sql/freeze.ts).
SELECT path FROM system.disks WHERE name = 'default'
