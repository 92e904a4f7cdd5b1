package main

import (
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// newScanTarget is a pointer to a fresh value of the driver's scan type for a column.
func newScanTarget(t reflect.Type) any {
	return reflect.New(t).Interface()
}

// encode writes a scanned value as JSON without losing precision: integers and decimals as
// decimal strings, dates and times as ClickHouse prints them in UTC, NULL as null.
func encode(v any, chType string) any {
	return encodeValue(reflect.ValueOf(v), unwrap(chType))
}

// unwrap strips Nullable(...) and LowCardinality(...) from a ClickHouse type name.
func unwrap(t string) string {
	for _, w := range []string{"Nullable(", "LowCardinality("} {
		if strings.HasPrefix(t, w) && strings.HasSuffix(t, ")") {
			return unwrap(t[len(w) : len(t)-1])
		}
	}
	return t
}

func encodeValue(v reflect.Value, chType string) any {
	if !v.IsValid() {
		return nil
	}
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return nil
		}
		if b, ok := v.Interface().(*big.Int); ok {
			return b.String()
		}
		return encodeValue(v.Elem(), chType)
	}
	switch x := v.Interface().(type) {
	case big.Int:
		return x.String()
	case decimal.Decimal:
		return x.String()
	case time.Time:
		t := x.UTC()
		switch {
		case chType == "Date" || chType == "Date32":
			return t.Format("2006-01-02")
		case strings.HasPrefix(chType, "DateTime64"):
			return t.Format("2006-01-02 15:04:05.000000000")
		default:
			return t.Format("2006-01-02 15:04:05")
		}
	case string:
		return x
	case bool:
		return x
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	case reflect.Map:
		out := map[string]any{}
		iter := v.MapRange()
		for iter.Next() {
			out[encodeValue(iter.Key(), "").(string)] = encodeValue(iter.Value(), "")
		}
		return out
	case reflect.Slice, reflect.Array:
		inner := ""
		if strings.HasPrefix(chType, "Array(") {
			inner = unwrap(chType[len("Array(") : len(chType)-1])
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = encodeValue(v.Index(i), inner)
		}
		return out
	}
	return v.Interface()
}
