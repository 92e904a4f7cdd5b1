-- The settle's clock: the UTC day and the start of the UTC hour it settles for.
SELECT toString(today()) AS today, toString(toStartOfHour(now('UTC'))) AS hour
