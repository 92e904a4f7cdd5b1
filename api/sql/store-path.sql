-- Where the service's engine keeps its data: every part the analysts' copy links is under it (api/sql/generations.ts).
SELECT path FROM system.disks WHERE name = 'default'
