"""clickhouse-connect against the SQL interface, as Superset uses it (test/support/drivers.ts).

Usage: driver.py MODE URL DATABASE, with a JSON request on stdin and a JSON answer on stdout.
  connect   Superset's "test connection": a SQLAlchemy engine on clickhousedb://, a ping
  schema    Superset's schema browser: SQLAlchemy's inspector (schemas, tables, views, columns)
  query     each {id, sql, params} in turn through clickhouse_connect.get_client
  parallel  all of them at once, one client per thread
Values are written as JSON with integers and decimals as strings (no precision lost), dates
and times as ClickHouse prints them; an error is {"id", "error"}.
"""

import datetime
import decimal
import json
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import clickhouse_connect
import sqlalchemy


def encode(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (int, decimal.Decimal, uuid.UUID)):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc)
        return v.strftime("%Y-%m-%d %H:%M:%S") + (f".{v.microsecond:06d}" if v.microsecond else "")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, dict):
        return {str(encode(k)): encode(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def client(url, database):
    u = urlparse(url)
    return clickhouse_connect.get_client(
        host=u.hostname, port=u.port, username=u.username or "default", password=u.password or "",
        database=database,
    )


def engine(url, database):
    u = urlparse(url)
    user = u.username or "default"
    return sqlalchemy.create_engine(f"clickhousedb://{user}:{u.password or ''}@{u.hostname}:{u.port}/{database}")


def run(c, q):
    try:
        r = c.query(q["sql"], parameters=q.get("params") or None)
        return {
            "id": q["id"],
            "columns": list(r.column_names),
            "types": [t.name for t in r.column_types],
            "rows": [[encode(v) for v in row] for row in r.result_rows],
        }
    except Exception as e:  # the answer, not a crash: the test reports which query failed and why
        return {"id": q["id"], "error": f"{type(e).__name__}: {e}"}


def main():
    mode, url, database = sys.argv[1:4]
    req = json.load(sys.stdin)
    if mode == "connect":
        eng = engine(url, database)
        with eng.connect() as conn:
            ok = eng.dialect.do_ping(conn.connection.dbapi_connection)
            version = conn.execute(sqlalchemy.text("SELECT version()")).scalar()
        out = {"ping": bool(ok), "version": version}
    elif mode == "schema":
        insp = sqlalchemy.inspect(engine(url, database))
        schema = req.get("schema", database)
        tables = sorted(insp.get_table_names(schema=schema))
        views = sorted(insp.get_view_names(schema=schema))
        out = {
            "databases": sorted(insp.get_schema_names()),
            "tables": tables,
            "views": views,
            "columns": {
                t: [[c["name"], str(c["type"])] for c in insp.get_columns(t, schema=schema)]
                for t in req.get("columnsOf", [])
            },
        }
    elif mode == "query":
        c = client(url, database)
        out = [run(c, q) for q in req["queries"]]
    elif mode == "parallel":
        qs = req["queries"]
        with ThreadPoolExecutor(max_workers=len(qs)) as pool:
            out = list(pool.map(lambda q: run(client(url, database), q), qs))
    else:
        raise SystemExit(f"unknown mode {mode}")
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
