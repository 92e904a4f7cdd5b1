package vaultstream;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ClickHouse JDBC v2 driver against the SQL interface, used as DBeaver uses it: a
 * connection from DriverManager on jdbc:clickhouse://, the schema browsed through
 * DatabaseMetaData, queries through PreparedStatement. Run by test/support/drivers.ts.
 *
 * <p>Usage: DriverCheck MODE URL DATABASE, with a JSON request on stdin and a JSON answer on
 * stdout (modes connect, schema, query, parallel as in test/drivers/go/main.go).
 */
public final class DriverCheck {
  private static final Pattern PARAM = Pattern.compile("\\{(\\w+):[^}]+\\}");

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    String url = args[1];
    String database = args[2];
    Object req = Json.parse(new String(System.in.readAllBytes(), StandardCharsets.UTF_8));
    Map<?, ?> request = (Map<?, ?>) req;
    Object out;
    switch (mode) {
      case "connect" -> {
        try (Connection c = connect(url, database)) {
          DatabaseMetaData md = c.getMetaData();
          Map<String, Object> o = new LinkedHashMap<>();
          o.put("ping", c.isValid(10));
          o.put("version", md.getDatabaseProductVersion());
          o.put("product", md.getDatabaseProductName());
          o.put("driver", md.getDriverName() + " " + md.getDriverVersion());
          out = o;
        }
      }
      case "schema" -> out = schema(url, database, request);
      case "query" -> {
        List<Object> answers = new ArrayList<>();
        try (Connection c = connect(url, database)) {
          for (Object q : (List<?>) request.get("queries")) answers.add(run(c, (Map<?, ?>) q));
        }
        out = answers;
      }
      case "parallel" -> {
        List<?> qs = (List<?>) request.get("queries");
        ExecutorService pool = Executors.newFixedThreadPool(qs.size());
        List<Future<Object>> futures = new ArrayList<>();
        for (Object q : qs)
          futures.add(pool.submit(() -> {
            try (Connection c = connect(url, database)) {
              return run(c, (Map<?, ?>) q);
            }
          }));
        List<Object> answers = new ArrayList<>();
        for (Future<Object> f : futures) answers.add(f.get());
        pool.shutdown();
        out = answers;
      }
      default -> throw new IllegalArgumentException("unknown mode " + mode);
    }
    System.out.println(Json.write(out));
  }

  /** DBeaver's connection: the URL names host, port and database; user and password as properties. */
  static Connection connect(String url, String database) throws SQLException {
    java.net.URI u = java.net.URI.create(url);
    Properties p = new Properties();
    String info = u.getUserInfo();
    p.setProperty("user", info == null ? "default" : info.split(":", 2)[0]);
    p.setProperty("password", info == null || !info.contains(":") ? "" : info.split(":", 2)[1]);
    return DriverManager.getConnection(
        "jdbc:clickhouse://" + u.getHost() + ":" + u.getPort() + "/" + database, p);
  }

  /** DBeaver's navigator: catalogs and schemas, the tables of one, the columns of some. */
  static Object schema(String url, String database, Map<?, ?> request) throws SQLException {
    Map<String, Object> o = new LinkedHashMap<>();
    try (Connection c = connect(url, database)) {
      DatabaseMetaData md = c.getMetaData();
      TreeSet<String> dbs = new TreeSet<>();
      try (ResultSet rs = md.getCatalogs()) {
        while (rs.next()) dbs.add(rs.getString("TABLE_CAT"));
      }
      try (ResultSet rs = md.getSchemas()) {
        while (rs.next()) dbs.add(rs.getString("TABLE_SCHEM"));
      }
      o.put("databases", new ArrayList<>(dbs));
      List<String> tables = new ArrayList<>();
      try (ResultSet rs = md.getTables(null, database, "%", null)) {
        while (rs.next()) tables.add(rs.getString("TABLE_NAME"));
      }
      o.put("tables", tables);
      Map<String, Object> columns = new LinkedHashMap<>();
      Object of = request.get("columnsOf");
      if (of != null)
        for (Object t : (List<?>) of) {
          List<Object> cols = new ArrayList<>();
          try (ResultSet rs = md.getColumns(null, database, (String) t, "%")) {
            while (rs.next()) cols.add(List.of(rs.getString("COLUMN_NAME"), rs.getString("TYPE_NAME")));
          }
          columns.put((String) t, cols);
        }
      o.put("columns", columns);
    }
    return o;
  }

  /** One query through a PreparedStatement, {name:Type} parameters bound in order as ?. */
  static Object run(Connection c, Map<?, ?> q) {
    Map<String, Object> a = new LinkedHashMap<>();
    a.put("id", q.get("id"));
    String sql = (String) q.get("sql");
    Map<?, ?> params = (Map<?, ?>) q.get("params");
    List<String> names = new ArrayList<>();
    if (params != null && !params.isEmpty()) {
      Matcher m = PARAM.matcher(sql);
      while (m.find()) names.add(m.group(1));
      sql = m.replaceAll("?");
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < names.size(); i++) ps.setString(i + 1, (String) params.get(names.get(i)));
      try (ResultSet rs = ps.executeQuery()) {
        ResultSetMetaData md = rs.getMetaData();
        List<Object> cols = new ArrayList<>();
        List<Object> types = new ArrayList<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
          cols.add(md.getColumnLabel(i));
          types.add(md.getColumnTypeName(i));
        }
        List<Object> rows = new ArrayList<>();
        while (rs.next()) {
          List<Object> row = new ArrayList<>();
          for (int i = 1; i <= cols.size(); i++) row.add(Values.encode(rs.getObject(i), (String) types.get(i - 1)));
          rows.add(row);
        }
        a.put("columns", cols);
        a.put("types", types);
        a.put("rows", rows);
      }
    } catch (Exception e) {
      a.put("error", e.toString() + (e.getCause() != null ? " caused by " + e.getCause() : ""));
    }
    return a;
  }
}
