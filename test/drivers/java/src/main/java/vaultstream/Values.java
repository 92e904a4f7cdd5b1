package vaultstream;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A value read with ResultSet.getObject as JSON without losing precision: integers and decimals
 * as decimal strings, dates and times as ClickHouse prints them in UTC, NULL as null.
 */
final class Values {
  private static final DateTimeFormatter SECONDS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");
  private static final DateTimeFormatter NANOS = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSSSSS");

  private Values() {}

  static Object encode(Object v, String type) throws java.sql.SQLException {
    if (v == null) return null;
    if (v instanceof String || v instanceof Boolean) return v;
    if (v instanceof BigDecimal d) return d.toPlainString();
    if (v instanceof BigInteger || v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte)
      return v.toString();
    if (v instanceof Double || v instanceof Float) return v.toString();
    if (v instanceof java.sql.Date d) return d.toLocalDate().toString();
    if (v instanceof LocalDate d) return d.toString();
    if (v instanceof Timestamp t) return time(t.toInstant(), type);
    if (v instanceof LocalDateTime t) return time(t.toInstant(ZoneOffset.UTC), type);
    if (v instanceof ZonedDateTime t) return time(t.toInstant(), type);
    if (v instanceof OffsetDateTime t) return time(t.toInstant(), type);
    if (v instanceof Instant t) return time(t, type);
    if (v instanceof java.sql.Array a) return encode(a.getArray(), elementType(type));
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> out = new LinkedHashMap<>();
      for (Map.Entry<?, ?> e : m.entrySet()) out.put(String.valueOf(encode(e.getKey(), "")), encode(e.getValue(), ""));
      return out;
    }
    if (v instanceof Collection<?> c) {
      List<Object> out = new ArrayList<>();
      for (Object x : c) out.add(encode(x, elementType(type)));
      return out;
    }
    if (v.getClass().isArray()) {
      List<Object> out = new ArrayList<>();
      for (int i = 0; i < java.lang.reflect.Array.getLength(v); i++)
        out.add(encode(java.lang.reflect.Array.get(v, i), elementType(type)));
      return out;
    }
    return v.toString();
  }

  private static String time(Instant t, String type) {
    var utc = t.atZone(ZoneOffset.UTC);
    return type != null && type.contains("DateTime64") ? NANOS.format(utc) : SECONDS.format(utc);
  }

  private static String elementType(String type) {
    return type != null && type.startsWith("Array(") ? type.substring(6, type.length() - 1) : "";
  }
}
