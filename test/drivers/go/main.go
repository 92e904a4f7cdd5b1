// clickhouse-go v2 against the SQL interface, connected as Grafana's ClickHouse plugin connects
// (grafana-clickhouse-datasource pkg/plugin/driver.go: clickhouse.OpenDB over HTTP with gzip,
// the client-info products, dial and read timeouts, the pool sizes, the row limit and custom
// settings, then a ping). Run by test/support/drivers.ts.
//
// Usage: driver-go MODE URL DATABASE, with a JSON request on stdin and a JSON answer on stdout.
//
//	connect   the plugin's health check: ping, then SELECT version()
//	schema    the plugin's schema browsing: SHOW DATABASES, SHOW TABLES FROM "db",
//	          DESC TABLE "db"."t", and its system.tables / system.columns queries
//	query     each {id, sql, params} in turn (params as server-side {name:Type} parameters)
//	parallel  all of them at once, one goroutine each on the plugin's pool
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

type query struct {
	ID     string            `json:"id"`
	SQL    string            `json:"sql"`
	Params map[string]string `json:"params"`
}

type request struct {
	Queries   []query  `json:"queries"`
	ColumnsOf []string `json:"columnsOf"`
	// Settings are the data source's custom settings (jsonData.customSettings).
	Settings map[string]string `json:"settings"`
}

type answer struct {
	ID      string   `json:"id"`
	Columns []string `json:"columns,omitempty"`
	Types   []string `json:"types,omitempty"`
	Rows    [][]any  `json:"rows,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// open connects with the plugin's options for protocol "http" and its defaults (dialTimeout
// 10 s, queryTimeout 60 s, Grafana's SQL row limit 1,000,000, maxOpenConns 50, maxIdleConns 25,
// connMaxLifetime 5 min).
func open(rawURL, database string, custom map[string]string) *sql.DB {
	u, err := url.Parse(rawURL)
	if err != nil {
		fail(err)
	}
	settings := clickhouse.Settings{}
	for k, v := range custom {
		settings[k] = v
	}
	settings["limit"] = int64(1_000_000)
	password, _ := u.User.Password()
	user := u.User.Username()
	if user == "" {
		user = "default"
	}
	db := clickhouse.OpenDB(&clickhouse.Options{
		Addr:        []string{u.Host},
		Auth:        clickhouse.Auth{Database: database, Username: user, Password: password},
		ClientInfo:  clickhouse.ClientInfo{Products: []struct{ Name, Version string }{{"grafana", "12.3.0"}, {"clickhouse-datasource", "4.12.0"}}},
		Compression: &clickhouse.Compression{Method: clickhouse.CompressionGZIP},
		DialTimeout: 10 * time.Second,
		Protocol:    clickhouse.HTTP,
		ReadTimeout: 60 * time.Second,
		Settings:    settings,
	})
	db.SetConnMaxLifetime(5 * time.Minute)
	db.SetMaxIdleConns(25)
	db.SetMaxOpenConns(50)
	return db
}

func run(ctx context.Context, db *sql.DB, q query) answer {
	if len(q.Params) > 0 {
		params := clickhouse.Parameters{}
		for k, v := range q.Params {
			params[k] = v
		}
		ctx = clickhouse.Context(ctx, clickhouse.WithParameters(params))
	}
	rows, err := db.QueryContext(ctx, q.SQL)
	if err != nil {
		return answer{ID: q.ID, Error: err.Error()}
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return answer{ID: q.ID, Error: err.Error()}
	}
	a := answer{ID: q.ID, Rows: [][]any{}}
	for _, ct := range cts {
		a.Columns = append(a.Columns, ct.Name())
		a.Types = append(a.Types, ct.DatabaseTypeName())
	}
	for rows.Next() {
		dest := make([]any, len(cts))
		for i, ct := range cts {
			dest[i] = newScanTarget(ct.ScanType())
		}
		if err := rows.Scan(dest...); err != nil {
			return answer{ID: q.ID, Error: err.Error()}
		}
		row := make([]any, len(cts))
		for i, d := range dest {
			row[i] = encode(d, a.Types[i])
		}
		a.Rows = append(a.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return answer{ID: q.ID, Error: err.Error()}
	}
	return a
}

func strings1(ctx context.Context, db *sql.DB, sqlText string) []string {
	rows, err := db.QueryContext(ctx, sqlText)
	if err != nil {
		fail(fmt.Errorf("%s: %w", sqlText, err))
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			fail(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		fail(fmt.Errorf("%s: %w", sqlText, err))
	}
	return out
}

func schema(ctx context.Context, db *sql.DB, database string, req request) map[string]any {
	out := map[string]any{
		"databases": strings1(ctx, db, "SHOW DATABASES"),
		"tables":    strings1(ctx, db, fmt.Sprintf("SHOW TABLES FROM %q", database)),
	}
	// The plugin's schema provider: every table, then the columns of the asked ones.
	rows, err := db.QueryContext(ctx, "SELECT database, name FROM system.tables ORDER BY database, name")
	if err != nil {
		fail(err)
	}
	qualified := []string{}
	for rows.Next() {
		var d, t string
		if err := rows.Scan(&d, &t); err != nil {
			fail(err)
		}
		if d != "system" {
			qualified = append(qualified, d+"."+t)
		}
	}
	rows.Close()
	out["systemTables"] = qualified
	desc := map[string][][2]string{}
	for _, t := range req.ColumnsOf {
		a := run(ctx, db, query{ID: t, SQL: fmt.Sprintf("DESC TABLE %q.%q", database, t)})
		if a.Error != "" {
			fail(fmt.Errorf("DESC TABLE %s: %s", t, a.Error))
		}
		for _, r := range a.Rows {
			desc[t] = append(desc[t], [2]string{r[0].(string), r[1].(string)})
		}
	}
	out["columns"] = desc
	return out
}

func main() {
	if len(os.Args) != 4 {
		fail(fmt.Errorf("usage: driver-go MODE URL DATABASE"))
	}
	mode, rawURL, database := os.Args[1], os.Args[2], os.Args[3]
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	db := open(rawURL, database, req.Settings)
	defer db.Close()
	var out any
	switch mode {
	case "connect":
		if err := db.PingContext(ctx); err != nil {
			fail(fmt.Errorf("ping: %w", err))
		}
		out = map[string]any{"ping": true, "version": strings1(ctx, db, "SELECT version()")[0]}
	case "schema":
		out = schema(ctx, db, database, req)
	case "query":
		as := []answer{}
		for _, q := range req.Queries {
			as = append(as, run(ctx, db, q))
		}
		out = as
	case "parallel":
		as := make([]answer, len(req.Queries))
		var wg sync.WaitGroup
		for i, q := range req.Queries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				as[i] = run(ctx, db, q)
			}()
		}
		wg.Wait()
		out = as
	default:
		fail(fmt.Errorf("unknown mode %s", mode))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "driver-go:", err)
	os.Exit(1)
}
