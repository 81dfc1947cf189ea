/*
 * The compiled twins of the broker's per-send codec work (see rocketmq_spec/codec/hotpath.py, which chooses between
 * them and the pure-Python functions they copy, and docs/DESIGN.md for why they exist).
 *
 * Every function here has a pure-Python twin and is held equal to it by property tests
 * (tests/test_hotpath_equal.py). Nothing here names a protocol field: header fields come in as plans
 * built from the spec's tables, and record widths are the spec's (checked against its construct schemas
 * by the same tests). Where a function meets input outside the shape it was written for, it returns
 * None and the caller takes the pure-Python path, which decides (and raises its typed errors).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------------ the spec's constants */

/* Set once by configure() from the spec's tables (rocketmq_spec/codec/hotpath.py), so no protocol number is written
 * twice; the property tests check the results against the construct schemas. */
static struct {
    long min_length, max_length, json_type;
    uint32_t magic_v1;
    long born_v6, store_v6, max_topic_length, max_properties_length;
    long long index_header_size, max_time_diff;
    int32_t first_index, invalid_index;
    int name_value_separator, property_separator;  /* one ASCII character each */
    int ready;
} spec;

static PyObject *configure(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"min_length", "max_length", "json_type", "magic_v1", "born_v6", "store_v6",
                            "max_topic_length", "max_properties_length", "index_header_size",
                            "max_time_diff", "first_index", "invalid_index", "name_value_separator",
                            "property_separator", NULL};
    unsigned long magic;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$lllkllllLLiiCC", names, &spec.min_length,
                                     &spec.max_length, &spec.json_type, &magic, &spec.born_v6,
                                     &spec.store_v6, &spec.max_topic_length, &spec.max_properties_length,
                                     &spec.index_header_size, &spec.max_time_diff, &spec.first_index,
                                     &spec.invalid_index, &spec.name_value_separator,
                                     &spec.property_separator)) return NULL;
    if (spec.name_value_separator > 0x7F || spec.property_separator > 0x7F) {
        PyErr_SetString(PyExc_ValueError, "the property separators must be ASCII");
        return NULL;
    }
    spec.magic_v1 = (uint32_t)magic;
    spec.ready = 1;
    Py_RETURN_NONE;
}

static int unconfigured(void) {
    if (spec.ready) return 0;
    PyErr_SetString(PyExc_RuntimeError, "rocketmq_spec.codec._hotpath used before configure()");
    return 1;
}

/* ------------------------------------------------------------------ small helpers */

static uint32_t crc_table[256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[n] = c;
    }
}

static uint32_t crc32_of(const unsigned char *p, Py_ssize_t n) {
    uint32_t c = 0xFFFFFFFFu;
    for (Py_ssize_t i = 0; i < n; i++) c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static inline void put32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}

static inline void put64(unsigned char *p, uint64_t v) {
    put32(p, (uint32_t)(v >> 32)); put32(p + 4, (uint32_t)v);
}

static inline uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t get64(const unsigned char *p) {
    return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* ------------------------------------------------------------------ JSON header scan */

/* A span of the header: a JSON string's raw bytes between its quotes (escapes not yet applied). */
typedef struct { const unsigned char *start; Py_ssize_t length; int escaped; } Span;

typedef struct { const unsigned char *p, *end; } Cursor;

static void skip_ws(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* Strict UTF-8 as Python's decoder judges it: no overlong forms, no surrogates, nothing past U+10FFFF. */
static int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        if (b < 0x80) { i++; continue; }
        int extra; uint32_t cp, min;
        if ((b & 0xE0) == 0xC0) { extra = 1; cp = b & 0x1F; min = 0x80; }
        else if ((b & 0xF0) == 0xE0) { extra = 2; cp = b & 0x0F; min = 0x800; }
        else if ((b & 0xF8) == 0xF0) { extra = 3; cp = b & 0x07; min = 0x10000; }
        else return 0;
        if (i + extra >= n) return 0;
        for (int k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += extra + 1;
    }
    return 1;
}

/* A JSON string at the cursor (which is on its opening quote). Control characters and escapes of
 * surrogates are refused (0), as is invalid UTF-8; Python's decoder refuses the former and keeps lone
 * surrogates, which the broker could not store anyway, so those frames go the general way. */
static int scan_string(Cursor *c, Span *span) {
    if (c->p >= c->end || *c->p != '"') return 0;
    const unsigned char *start = ++c->p;
    int escaped = 0;
    while (c->p < c->end && *c->p != '"') {
        unsigned char b = *c->p;
        if (b < 0x20) return 0;
        if (b == '\\') {
            escaped = 1;
            if (c->p + 1 >= c->end) return 0;
            unsigned char e = c->p[1];
            if (e == 'u') {
                if (c->p + 6 > c->end) return 0;
                uint32_t u = 0;
                for (int k = 2; k < 6; k++) {
                    unsigned char h = c->p[k];
                    u <<= 4;
                    if (h >= '0' && h <= '9') u |= h - '0';
                    else if (h >= 'a' && h <= 'f') u |= h - 'a' + 10;
                    else if (h >= 'A' && h <= 'F') u |= h - 'A' + 10;
                    else return 0;
                }
                if (u >= 0xD800 && u <= 0xDFFF) return 0;
                c->p += 6;
                continue;
            }
            if (!strchr("\"\\/bfnrt", e) || e == 0) return 0;
            c->p += 2;
            continue;
        }
        c->p++;
    }
    if (c->p >= c->end) return 0;
    span->start = start;
    span->length = c->p - start;
    span->escaped = escaped;
    c->p++;
    return utf8_valid(start, span->length);
}

/* The text of a string span with its escapes applied, as a str. */
static PyObject *span_text(const Span *span) {
    if (!span->escaped) return PyUnicode_DecodeUTF8((const char *)span->start, span->length, "strict");
    unsigned char stack[512];
    unsigned char *out = span->length <= (Py_ssize_t)sizeof(stack) ? stack : PyMem_Malloc(span->length);
    if (out == NULL) return PyErr_NoMemory();
    Py_ssize_t n = 0;
    const unsigned char *p = span->start, *end = span->start + span->length;
    while (p < end) {
        if (*p != '\\') { out[n++] = *p++; continue; }
        unsigned char e = p[1];
        if (e == 'u') {
            uint32_t u = 0;
            for (int k = 2; k < 6; k++) {
                unsigned char h = p[k];
                u = u << 4 | (uint32_t)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
            }
            if (u < 0x80) out[n++] = (unsigned char)u;
            else if (u < 0x800) { out[n++] = 0xC0 | (u >> 6); out[n++] = 0x80 | (u & 0x3F); }
            else { out[n++] = 0xE0 | (u >> 12); out[n++] = 0x80 | ((u >> 6) & 0x3F); out[n++] = 0x80 | (u & 0x3F); }
            p += 6;  /* six bytes of escape never give more than three of UTF-8 */
            continue;
        }
        switch (e) {
            case 'b': out[n++] = '\b'; break;
            case 'f': out[n++] = '\f'; break;
            case 'n': out[n++] = '\n'; break;
            case 'r': out[n++] = '\r'; break;
            case 't': out[n++] = '\t'; break;
            default: out[n++] = e;
        }
        p += 2;
    }
    PyObject *text = PyUnicode_DecodeUTF8((const char *)out, n, "strict");
    if (out != stack) PyMem_Free(out);
    return text;
}

static int span_is(const Span *span, const char *literal) {
    size_t n = strlen(literal);
    return !span->escaped && (size_t)span->length == n && memcmp(span->start, literal, n) == 0;
}

/* A JSON integer (no fraction or exponent, no leading zero) that fits a Java int. */
static int scan_int32(Cursor *c, int32_t *out) {
    int negative = 0;
    if (c->p < c->end && *c->p == '-') { negative = 1; c->p++; }
    if (c->p >= c->end || *c->p < '0' || *c->p > '9') return 0;
    if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9') return 0;
    int64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        v = v * 10 + (*c->p++ - '0');
        if (v > 2147483648LL) return 0;
    }
    if (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')) return 0;
    if (negative) v = -v;
    if (v > 2147483647LL) return 0;
    *out = (int32_t)v;
    return 1;
}

static int scan_literal(Cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
    c->p += n;
    return 1;
}

#define MAX_EXT 64
typedef struct { Span key, value; } Entry;

typedef struct {
    int32_t code, flag, opaque, version;
    int has_code;
    Entry ext[MAX_EXT];
    int ext_count;
} Header;

/* The header of a request as Java writes it: every key one of the RemotingCommand fields, each once,
 * extFields an object of strings. Anything else returns 0 and the frame goes the general way. */
static int scan_header(const unsigned char *p, Py_ssize_t n, Header *h) {
    Cursor c = {p, p + n};
    int seen = 0;
    h->code = h->flag = h->opaque = h->version = 0;
    h->has_code = 0;
    h->ext_count = 0;
    skip_ws(&c);
    if (c.p >= c.end || *c.p++ != '{') return 0;
    skip_ws(&c);
    if (c.p < c.end && *c.p == '}') { c.p++; goto done; }
    for (;;) {
        Span key;
        skip_ws(&c);
        if (!scan_string(&c, &key)) return 0;
        skip_ws(&c);
        if (c.p >= c.end || *c.p++ != ':') return 0;
        skip_ws(&c);
        int bit;
        if (span_is(&key, "code")) { bit = 1; if (!scan_int32(&c, &h->code)) return 0; h->has_code = 1; }
        else if (span_is(&key, "flag")) { bit = 2; if (!scan_int32(&c, &h->flag)) return 0; }
        else if (span_is(&key, "opaque")) { bit = 4; if (!scan_int32(&c, &h->opaque)) return 0; }
        else if (span_is(&key, "version")) { bit = 8; if (!scan_int32(&c, &h->version)) return 0; }
        else if (span_is(&key, "language") || span_is(&key, "serializeTypeCurrentRPC")) {
            Span ignored;
            bit = span_is(&key, "language") ? 16 : 32;
            if (!scan_string(&c, &ignored)) return 0;
        } else if (span_is(&key, "remark")) {
            Span ignored;
            bit = 64;
            if (!scan_literal(&c, "null") && !scan_string(&c, &ignored)) return 0;
        } else if (span_is(&key, "extFields")) {
            bit = 128;
            if (!scan_literal(&c, "null")) {
                if (c.p >= c.end || *c.p++ != '{') return 0;
                skip_ws(&c);
                if (c.p < c.end && *c.p == '}') c.p++;
                else for (;;) {
                    if (h->ext_count == MAX_EXT) return 0;
                    Entry *e = &h->ext[h->ext_count++];
                    skip_ws(&c);
                    if (!scan_string(&c, &e->key) || e->key.escaped) return 0;
                    skip_ws(&c);
                    if (c.p >= c.end || *c.p++ != ':') return 0;
                    skip_ws(&c);
                    if (!scan_string(&c, &e->value)) return 0;
                    skip_ws(&c);
                    if (c.p >= c.end) return 0;
                    if (*c.p == ',') { c.p++; continue; }
                    if (*c.p++ != '}') return 0;
                    break;
                }
            }
        } else {
            return 0;
        }
        if (seen & bit) return 0;
        seen |= bit;
        skip_ws(&c);
        if (c.p >= c.end) return 0;
        if (*c.p == ',') { c.p++; continue; }
        if (*c.p++ != '}') return 0;
        break;
    }
done:
    skip_ws(&c);
    return c.p == c.end;
}

/* ------------------------------------------------------------------ typed custom header */

enum { KIND_STRING = 0, KIND_INT = 1, KIND_LONG = 2, KIND_BOOLEAN = 3 };

/* The ext value named ``name`` (the last one, as a dict built from the entries keeps), or NULL. */
static const Entry *find_entry(const Header *h, const char *name, Py_ssize_t length) {
    for (int i = h->ext_count - 1; i >= 0; i--) {
        const Span *k = &h->ext[i].key;
        if (!k->escaped && k->length == length && memcmp(k->start, name, length) == 0) return &h->ext[i];
    }
    return NULL;
}

/* decode_header's number grammar for ASCII text: [+-]?[0-9]+ within the field's range. */
static int parse_number(const Span *s, int kind, long long *out) {
    const unsigned char *p = s->start, *end = s->start + s->length;
    if (s->escaped || p == end) return 0;
    int negative = 0;
    if (*p == '+' || *p == '-') { negative = *p == '-'; p++; }
    if (p == end) return 0;
    unsigned long long v = 0, limit = kind == KIND_INT ? (negative ? 2147483648ULL : 2147483647ULL)
                                                      : (negative ? 9223372036854775808ULL : 9223372036854775807ULL);
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') return 0;
        unsigned digit = *p - '0';
        if (v > (limit - digit) / 10) return 0;
        v = v * 10 + digit;
    }
    *out = negative ? (long long)(0 - v) : (long long)v;
    return 1;
}

static int parse_boolean(const Span *s, int *out) {
    if (s->escaped) return 0;
    char lower[6] = {0};
    if (s->length < 1 || s->length > 5) return 0;
    for (Py_ssize_t i = 0; i < s->length; i++) lower[i] = (char)(s->start[i] | (s->start[i] >= 'A' && s->start[i] <= 'Z' ? 0x20 : 0));
    /* RMQ-CMD-BOOLEAN: only "true" is true; "1" and "0" are false, as Boolean.parseBoolean reads them */
    if (!strcmp(lower, "true")) { *out = 1; return 1; }
    if (!strcmp(lower, "false") || !strcmp(lower, "1") || !strcmp(lower, "0")) { *out = 0; return 1; }
    return 0;
}

/* The typed header as codec.custom_header.decode_header builds it, or Py_None (0 returned) where that
 * function would raise or where the text is outside the ASCII grammar handled here. */
static int typed_fields(const Header *h, PyObject *plan, PyObject **out) {
    Py_ssize_t count = PyTuple_GET_SIZE(plan);
    /* sized for every field at once: a header of a dozen fields would otherwise grow the dict twice */
    PyObject *values = _PyDict_NewPresized(count);
    if (values == NULL) return -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *slot = PyTuple_GET_ITEM(plan, i);  /* (wire name bytes, key str, kind int, required) */
        PyObject *wire = PyTuple_GET_ITEM(slot, 0), *key = PyTuple_GET_ITEM(slot, 1);
        long kind = PyLong_AsLong(PyTuple_GET_ITEM(slot, 2));
        int required = PyObject_IsTrue(PyTuple_GET_ITEM(slot, 3));
        const Entry *e = find_entry(h, PyBytes_AS_STRING(wire), PyBytes_GET_SIZE(wire));
        if (e == NULL || (e->value.length == 0 && kind != KIND_STRING)) {
            if (required) goto decline;
            continue;
        }
        PyObject *value;
        if (kind == KIND_STRING) {
            value = span_text(&e->value);
        } else if (kind == KIND_BOOLEAN) {
            int b;
            if (!parse_boolean(&e->value, &b)) goto decline;
            value = PyBool_FromLong(b);
        } else {
            long long number;
            if (!parse_number(&e->value, (int)kind, &number)) goto decline;
            value = PyLong_FromLongLong(number);
        }
        if (value == NULL || PyDict_SetItem(values, key, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(values);
            return -1;
        }
        Py_DECREF(value);
    }
    *out = values;
    return 1;
decline:
    Py_DECREF(values);
    return 0;
}

/* scan_request(frame, prefixes, plans) -> (code, opaque, header, body) | None: rocketmq_spec/codec/send_request.py. */
static PyObject *scan_request(PyObject *self, PyObject *args) {
    Py_buffer frame;
    PyObject *prefixes, *plans;
    if (!PyArg_ParseTuple(args, "y*O!O!", &frame, &PyTuple_Type, &prefixes, &PyDict_Type, &plans)) return NULL;
    PyObject *result = NULL;
    if (unconfigured()) goto fail;
    const unsigned char *p = frame.buf;
    Py_ssize_t n = frame.len;
    if (n < 8 || (Py_ssize_t)get32(p) != n - 4 || n - 4 < spec.min_length || n - 4 > spec.max_length)
        goto decline;
    uint32_t word = get32(p + 4);
    Py_ssize_t header_length = word & 0xFFFFFF;
    if ((long)(word >> 24) != spec.json_type || header_length > n - 8) goto decline;
    const unsigned char *header = p + 8;
    int prefixed = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(prefixes); i++) {
        PyObject *prefix = PyTuple_GET_ITEM(prefixes, i);
        Py_ssize_t k = PyBytes_GET_SIZE(prefix);
        if (k <= header_length && memcmp(header, PyBytes_AS_STRING(prefix), k) == 0) { prefixed = 1; break; }
    }
    if (!prefixed) goto decline;
    Header h;
    if (!scan_header(header, header_length, &h) || h.flag != 0) goto decline;
    PyObject *code = PyLong_FromLong(h.code);
    if (code == NULL) goto fail;
    PyObject *plan = PyDict_GetItemWithError(plans, code);
    Py_DECREF(code);
    if (plan == NULL) { if (PyErr_Occurred()) goto fail; goto decline; }
    PyObject *values;
    int typed = typed_fields(&h, plan, &values);
    if (typed < 0) goto fail;
    if (typed == 0) goto decline;
    result = Py_BuildValue("(iiNy#)", h.code, h.opaque, values, (const char *)header + header_length,
                           n - 8 - header_length);
    PyBuffer_Release(&frame);
    return result;
decline:
    PyBuffer_Release(&frame);
    Py_RETURN_NONE;
fail:
    PyBuffer_Release(&frame);
    return NULL;
}

/* ------------------------------------------------------------------ properties */

/* parse_properties(text) -> dict, spec.properties.parse_properties' rules; None when the text has no
 * UTF-8 form (lone surrogates), which the pure function then takes. */
static PyObject *parse_properties(PyObject *self, PyObject *text) {
    if (unconfigured()) return NULL;
    if (!PyUnicode_Check(text)) { PyErr_SetString(PyExc_TypeError, "text must be str"); return NULL; }
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    if (s == NULL) { PyErr_Clear(); Py_RETURN_NONE; }
    PyObject *result = PyDict_New();
    if (result == NULL) return NULL;
    Py_ssize_t start = 0;
    while (start <= n) {
        const char *seg = s + start;
        const char *stop = memchr(seg, spec.property_separator, n - start);
        Py_ssize_t length = stop ? stop - seg : n - start;
        const char *sep = memchr(seg, spec.name_value_separator, length);
        if (sep != NULL && sep > seg && sep < seg + length - 1) {
            PyObject *name = PyUnicode_DecodeUTF8(seg, sep - seg, "strict");
            PyObject *value = name ? PyUnicode_DecodeUTF8(sep + 1, seg + length - sep - 1, "strict") : NULL;
            int failed = value == NULL;
            if (!failed) {
                int present = PyDict_Contains(result, name);
                failed = present < 0 || (present && PyDict_DelItem(result, name) < 0)
                         || PyDict_SetItem(result, name, value) < 0;
            }
            Py_XDECREF(name);
            Py_XDECREF(value);
            if (failed) { Py_DECREF(result); return NULL; }
        }
        start += length + 1;
    }
    return result;
}

/* encode_properties(properties, order=None) -> str: spec.properties.encode_properties, the names of
 * ``order`` (or the dict's own) each written as name, separator, value, between property separators, a
 * None value skipped. None (the pure function decides) for anything but a dict of str names whose values
 * are str or None, and for a name of ``order`` the dict lacks. */
static PyObject *encode_properties(PyObject *self, PyObject *args) {
    PyObject *properties, *order = Py_None;
    if (unconfigured()) return NULL;
    if (!PyArg_ParseTuple(args, "O|O", &properties, &order)) return NULL;
    if (!PyDict_CheckExact(properties)) Py_RETURN_NONE;
    PyObject *names = PySequence_Fast(order == Py_None ? properties : order, "order must be iterable");
    if (!names) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(names), length = 0, written = 0;
    PyObject **items = PySequence_Fast_ITEMS(names);
    PyObject *values[64];
    Py_UCS4 widest = 0x7F;
    if (count > 64) { Py_DECREF(names); Py_RETURN_NONE; }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *name = items[i], *value = PyUnicode_Check(name) ? PyDict_GetItemWithError(properties, name)
                                                                   : NULL;
        if (value == NULL || (value != Py_None && !PyUnicode_Check(value))) {
            Py_DECREF(names);
            if (PyErr_Occurred()) return NULL;
            Py_RETURN_NONE;
        }
        values[i] = value;
        if (value == Py_None) continue;
        length += (written++ ? 1 : 0) + PyUnicode_GET_LENGTH(name) + 1 + PyUnicode_GET_LENGTH(value);
        Py_UCS4 a = PyUnicode_MAX_CHAR_VALUE(name), b = PyUnicode_MAX_CHAR_VALUE(value);
        if (a > widest) widest = a;
        if (b > widest) widest = b;
    }
    PyObject *text = PyUnicode_New(length, widest);
    if (!text) { Py_DECREF(names); return NULL; }
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (values[i] == Py_None) continue;
        if (at) PyUnicode_WRITE(PyUnicode_KIND(text), PyUnicode_DATA(text), at++, spec.property_separator);
        PyUnicode_CopyCharacters(text, at, items[i], 0, PyUnicode_GET_LENGTH(items[i]));
        at += PyUnicode_GET_LENGTH(items[i]);
        PyUnicode_WRITE(PyUnicode_KIND(text), PyUnicode_DATA(text), at++, spec.name_value_separator);
        PyUnicode_CopyCharacters(text, at, values[i], 0, PyUnicode_GET_LENGTH(values[i]));
        at += PyUnicode_GET_LENGTH(values[i]);
    }
    Py_DECREF(names);
    return text;
}

/* ------------------------------------------------------------------ record */

/* pack_plain_record(queue_id, flag, queue_offset, physical_offset, sys_flag, born_timestamp, born_ip,
 * born_port, store_timestamp, store_ip, store_port, reconsume_times, body, topic, properties) -> bytes:
 * a v1 record with TOTALSIZE and BODYCRC computed (codec.fast_store.pack_plain_record); None for values
 * that do not fit their fields, which the pure function refuses with its typed error. */
/* One argument of a fast call as a C integer within [low, high]: 1 when it is, 0 when it is an integer
 * outside (the caller declines), -1 with the error set when it is not an integer. Parsing fifteen
 * arguments with PyArg_ParseTuple's format took more instructions than packing the record. */
static int int_arg(PyObject *arg, long long low, long long high, long long *out) {
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (value == -1 && PyErr_Occurred()) return -1;
    if (overflow || value < low || value > high) return 0;
    *out = value;
    return 1;
}

static PyObject *pack_plain_record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    enum { QUEUE_ID, FLAG, QUEUE_OFFSET, PHYSICAL_OFFSET, SYS_FLAG, BORN_TIMESTAMP, BORN_IP, BORN_PORT,
           STORE_TIMESTAMP, STORE_IP, STORE_PORT, RECONSUME_TIMES, BODY, TOPIC, PROPERTIES, ARGS };
    static const int buffers[] = {BORN_IP, STORE_IP, BODY, TOPIC, PROPERTIES};
    static const struct { int arg; int wide; } integers[] = {  /* wide: a Java long, else an int */
        {QUEUE_ID, 0}, {FLAG, 0}, {QUEUE_OFFSET, 1}, {PHYSICAL_OFFSET, 1}, {SYS_FLAG, 0}, {BORN_TIMESTAMP, 1},
        {BORN_PORT, 0}, {STORE_TIMESTAMP, 1}, {STORE_PORT, 0}, {RECONSUME_TIMES, 0}};
    if (nargs != ARGS) {
        PyErr_Format(PyExc_TypeError, "pack_plain_record takes %d arguments (%zd given)", ARGS, nargs);
        return NULL;
    }
    long long number[ARGS];
    for (size_t i = 0; i < sizeof integers / sizeof integers[0]; i++) {
        int arg = integers[i].arg, wide = integers[i].wide;
        int got = int_arg(args[arg], wide ? LLONG_MIN : INT_MIN, wide ? LLONG_MAX : INT_MAX, &number[arg]);
        if (got < 0) return NULL;
        if (got == 0) Py_RETURN_NONE;
    }
    Py_buffer view[5];
    int held = 0;
    for (; held < 5; held++) {
        if (PyUnicode_Check(args[buffers[held]])) {
            PyErr_SetString(PyExc_TypeError, "a bytes-like object is required, not 'str'");
            break;
        }
        if (PyObject_GetBuffer(args[buffers[held]], &view[held], PyBUF_SIMPLE) < 0) break;
    }
    PyObject *result = NULL;
    if (held < 5) goto out;
    Py_buffer born_ip = view[0], store_ip = view[1], body = view[2], topic = view[3], properties = view[4];
    int queue_id = (int)number[QUEUE_ID], flag = (int)number[FLAG], sys_flag = (int)number[SYS_FLAG];
    int born_port = (int)number[BORN_PORT], store_port = (int)number[STORE_PORT];
    int reconsume_times = (int)number[RECONSUME_TIMES];
    long long queue_offset = number[QUEUE_OFFSET], physical_offset = number[PHYSICAL_OFFSET];
    long long born_timestamp = number[BORN_TIMESTAMP], store_timestamp = number[STORE_TIMESTAMP];
    if (unconfigured()) goto out;
    Py_ssize_t born_width = sys_flag & spec.born_v6 ? 16 : 4, store_width = sys_flag & spec.store_v6 ? 16 : 4;
    if (born_ip.len != born_width || store_ip.len != store_width || topic.len > spec.max_topic_length
        || properties.len > spec.max_properties_length || body.len > 2147483647LL) {
        result = Py_None;
        Py_INCREF(result);
        goto out;
    }
    Py_ssize_t total = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + born_width + 4 + 8 + store_width + 4 + 4 + 8
                       + 4 + body.len + 1 + topic.len + 2 + properties.len;
    if (total > 2147483647LL) { result = Py_None; Py_INCREF(result); goto out; }
    result = PyBytes_FromStringAndSize(NULL, total);
    if (result == NULL) goto out;
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(result);
    put32(o, (uint32_t)total); o += 4;
    put32(o, spec.magic_v1); o += 4;
    put32(o, crc32_of(body.buf, body.len) & 0x7FFFFFFFu); o += 4;
    put32(o, (uint32_t)queue_id); o += 4;
    put32(o, (uint32_t)flag); o += 4;
    put64(o, (uint64_t)queue_offset); o += 8;
    put64(o, (uint64_t)physical_offset); o += 8;
    put32(o, (uint32_t)sys_flag); o += 4;
    put64(o, (uint64_t)born_timestamp); o += 8;
    memcpy(o, born_ip.buf, born_width); o += born_width;
    put32(o, (uint32_t)born_port); o += 4;
    put64(o, (uint64_t)store_timestamp); o += 8;
    memcpy(o, store_ip.buf, store_width); o += store_width;
    put32(o, (uint32_t)store_port); o += 4;
    put32(o, (uint32_t)reconsume_times); o += 4;
    put64(o, 0); o += 8;  /* PREPARED TRANSACTION OFFSET */
    put32(o, (uint32_t)body.len); o += 4;
    memcpy(o, body.buf, body.len); o += body.len;
    *o++ = (unsigned char)topic.len;
    memcpy(o, topic.buf, topic.len); o += topic.len;
    *o++ = (unsigned char)(properties.len >> 8); *o++ = (unsigned char)properties.len;
    memcpy(o, properties.buf, properties.len);
out:
    for (int i = 0; i < held; i++) PyBuffer_Release(&view[i]);
    return result;
}

/* ------------------------------------------------------------------ hashes */

/* String.hashCode of a str over its UTF-16 code units (the caller checked it is a str). */
static int32_t utf16_hash(PyObject *text) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    uint32_t h = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 ch = PyUnicode_READ(kind, data, i);
        if (ch > 0xFFFF) {
            ch -= 0x10000;
            h = 31 * h + (0xD800 + (ch >> 10));
            h = 31 * h + (0xDC00 + (ch & 0x3FF));
        } else {
            h = 31 * h + ch;
        }
    }
    return (int32_t)h;
}

/* java_string_hash(text) -> int: String.hashCode over UTF-16 code units. */
static PyObject *java_string_hash(PyObject *self, PyObject *text) {
    if (!PyUnicode_Check(text)) { PyErr_SetString(PyExc_TypeError, "text must be str"); return NULL; }
    return PyLong_FromLong((long)utf16_hash(text));
}

/* ------------------------------------------------------------------ index entries */

/* put_index_keys(map, keys, phy_offset, store_timestamp, slot_count, capacity) -> int:
 * codec.fast_store.put_index_keys, one record's index keys written as IndexFile.putKey writes each (entry,
 * slot, header); returns how many went in before the file was full. None (nothing written) where the
 * header, a slot or an entry below capacity would lie outside the buffer, a count is not positive, or a
 * key is not str: the pure function decides those. */
static PyObject *put_index_keys(PyObject *self, PyObject *args) {
    Py_buffer map;
    PyObject *keys;
    long long phy_offset, store_timestamp, slot_count, capacity;
    if (unconfigured()) return NULL;
    if (!PyArg_ParseTuple(args, "w*OLLLL", &map, &keys, &phy_offset, &store_timestamp, &slot_count,
                          &capacity)) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) { PyErr_Clear(); Py_RETURN_NONE; }
        return NULL;
    }
    PyObject *sequence = PySequence_Fast(keys, "keys must be a sequence");
    if (!sequence) { PyBuffer_Release(&map); return NULL; }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(sequence);
    PyObject **items = PySequence_Fast_ITEMS(sequence);
    long long slots_at = spec.index_header_size, entries_at = slots_at + slot_count * 4;
    int fits = slot_count > 0 && capacity > 0 && map.len >= slots_at && entries_at <= map.len
               && capacity <= (map.len - entries_at) / 20;
    for (Py_ssize_t i = 0; fits && i < n; i++) fits = PyUnicode_Check(items[i]);
    if (!fits) { Py_DECREF(sequence); PyBuffer_Release(&map); Py_RETURN_NONE; }
    unsigned char *base = map.buf;
    long long begin_ts = (long long)get64(base), begin_phy = (long long)get64(base + 16);
    int32_t used_slots = (int32_t)get32(base + 32), count = (int32_t)get32(base + 36);
    if (count <= 0) count = spec.first_index;
    long long time_diff = 0;
    if (begin_ts > 0 && store_timestamp > begin_ts) {
        time_diff = (store_timestamp - begin_ts) / 1000;
        if (time_diff > spec.max_time_diff) time_diff = spec.max_time_diff;
    }
    Py_ssize_t written = 0;
    for (; written < n && count < capacity; written++) {
        int32_t h = utf16_hash(items[written]);  /* every key was checked to be a str */
        long long key_hash = h == INT32_MIN ? 0 : (h < 0 ? -(long long)h : h);
        unsigned char *slot = base + slots_at + (key_hash % slot_count) * 4;
        int32_t old = (int32_t)get32(slot);
        if (old <= spec.invalid_index || old > count) { old = spec.invalid_index; used_slots++; }
        unsigned char *entry = base + entries_at + (long long)count * 20;
        put32(entry, (uint32_t)key_hash);
        put64(entry + 4, (uint64_t)phy_offset);
        put32(entry + 12, (uint32_t)time_diff);
        put32(entry + 16, (uint32_t)old);
        put32(slot, (uint32_t)count);
        if (count <= spec.first_index) {  /* the file's first record: later keys count from it */
            begin_phy = phy_offset;
            begin_ts = store_timestamp;
            time_diff = 0;
        }
        count++;
    }
    if (written) {
        put64(base, (uint64_t)begin_ts);
        put64(base + 8, (uint64_t)store_timestamp);
        put64(base + 16, (uint64_t)begin_phy);
        put64(base + 24, (uint64_t)phy_offset);
        put32(base + 32, (uint32_t)used_slots);
        put32(base + 36, (uint32_t)count);
    }
    Py_DECREF(sequence);
    PyBuffer_Release(&map);
    return PyLong_FromSsize_t(written);
}

/* ------------------------------------------------------------------ answers */

static PyObject *join_answer_body(PyObject *pieces, PyObject *order, int opaque, PyObject *values,
                                  PyObject *body);

/* join_answer(pieces, order, opaque, values[, body]) -> bytes | None: JsonAnswerTemplate.frame's join;
 * ``body`` is a sequence of bytes pieces, copied once, straight into the frame. */
static PyObject *join_answer(PyObject *self, PyObject *args) {
    PyObject *pieces, *order, *values, *body = NULL;
    int opaque;
    if (unconfigured()) return NULL;
    if (!PyArg_ParseTuple(args, "O!O!iO!|O", &PyTuple_Type, &pieces, &PyTuple_Type, &order, &opaque,
                          &PyTuple_Type, &values, &body)) return NULL;
    PyObject *parts = NULL;
    if (body != NULL) {
        parts = PySequence_Fast(body, "an answer's body is a sequence of bytes pieces");
        if (parts == NULL) return NULL;
    }
    PyObject *frame = join_answer_body(pieces, order, opaque, values, parts);
    Py_XDECREF(parts);
    return frame;
}

static PyObject *join_answer_body(PyObject *pieces, PyObject *order, int opaque, PyObject *values,
                                  PyObject *body) {
    Py_ssize_t slots = PyTuple_GET_SIZE(values), cuts = PyTuple_GET_SIZE(order);
    if (PyTuple_GET_SIZE(pieces) != cuts + 1) {
        PyErr_SetString(PyExc_ValueError, "a template has one piece more than it has cuts");
        return NULL;
    }
    const char *texts[16];
    Py_ssize_t lengths[16];
    char digits[16];
    if (slots + 1 > 16) Py_RETURN_NONE;  /* more values than templates have: the pure function joins them */
    lengths[0] = snprintf(digits, sizeof digits, "%d", opaque);
    texts[0] = digits;
    for (Py_ssize_t i = 0; i < slots; i++) {
        PyObject *v = PyTuple_GET_ITEM(values, i);
        if (!PyUnicode_Check(v) || !PyUnicode_IS_ASCII(v)) Py_RETURN_NONE;
        const char *s = (const char *)PyUnicode_DATA(v);
        Py_ssize_t k = PyUnicode_GET_LENGTH(v);
        for (Py_ssize_t j = 0; j < k; j++) {
            char ch = s[j];
            if (!((ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z')
                  || ch == ',' || ch == '-')) Py_RETURN_NONE;
        }
        texts[i + 1] = s;
        lengths[i + 1] = k;
    }
    Py_ssize_t header = PyBytes_GET_SIZE(PyTuple_GET_ITEM(pieces, 0));
    for (Py_ssize_t i = 0; i < cuts; i++) {
        long which = PyLong_AsLong(PyTuple_GET_ITEM(order, i));
        if (which < 0 || which > slots) { PyErr_SetString(PyExc_ValueError, "cut names no value"); return NULL; }
        header += lengths[which] + PyBytes_GET_SIZE(PyTuple_GET_ITEM(pieces, i + 1));
    }
    Py_ssize_t body_pieces = body ? PySequence_Fast_GET_SIZE(body) : 0, body_length = 0;
    for (Py_ssize_t i = 0; i < body_pieces; i++) {
        PyObject *piece = PySequence_Fast_GET_ITEM(body, i);
        if (!PyBytes_Check(piece)) {
            PyErr_Format(PyExc_TypeError, "an answer's body piece must be bytes, not %.80s", Py_TYPE(piece)->tp_name);
            return NULL;
        }
        body_length += PyBytes_GET_SIZE(piece);
    }
    PyObject *frame = PyBytes_FromStringAndSize(NULL, 8 + header + body_length);
    if (frame == NULL) return NULL;
    unsigned char *o = (unsigned char *)PyBytes_AS_STRING(frame);
    put32(o, (uint32_t)(4 + header + body_length));
    put32(o + 4, (uint32_t)spec.json_type << 24 | (uint32_t)header);
    o += 8;
    PyObject *first = PyTuple_GET_ITEM(pieces, 0);
    memcpy(o, PyBytes_AS_STRING(first), PyBytes_GET_SIZE(first));
    o += PyBytes_GET_SIZE(first);
    for (Py_ssize_t i = 0; i < cuts; i++) {
        long which = PyLong_AsLong(PyTuple_GET_ITEM(order, i));
        memcpy(o, texts[which], lengths[which]);
        o += lengths[which];
        PyObject *piece = PyTuple_GET_ITEM(pieces, i + 1);
        memcpy(o, PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece));
        o += PyBytes_GET_SIZE(piece);
    }
    for (Py_ssize_t i = 0; i < body_pieces; i++) {
        PyObject *piece = PySequence_Fast_GET_ITEM(body, i);
        memcpy(o, PyBytes_AS_STRING(piece), PyBytes_GET_SIZE(piece));
        o += PyBytes_GET_SIZE(piece);
    }
    return frame;
}

/* ------------------------------------------------------------------ pulls */

/* gather_records(rows, files, file_size, max_nums, max_bytes, max_count, tag_codes)
 *   -> (scanned, records, queue_offset_deltas, missing): codec.fast_store.gather_records. ``rows`` are
 * consume-queue entries (big-endian commitlog offset, size, tags code; 20 bytes each), ``files`` the
 * commitlog's files as (start offset, written length, mapping). */
static PyObject *gather_records(PyObject *self, PyObject *args) {
    Py_buffer rows;
    PyObject *files, *tag_codes;
    long long file_size, max_bytes;
    long max_nums, max_count;
    if (!PyArg_ParseTuple(args, "y*O!LlLlO", &rows, &PyList_Type, &files, &file_size, &max_nums, &max_bytes,
                          &max_count, &tag_codes)) return NULL;
    PyObject *records = PyList_New(0), *deltas = PyList_New(0), *result = NULL;
    Py_buffer mapping = {0};
    Py_ssize_t mapped_index = -1;
    if (records == NULL || deltas == NULL) goto out;
    Py_ssize_t entries = rows.len / 20, scanned = 0, file_count = PyList_GET_SIZE(files);
    long long total = 0, first_start = 0;
    int missing = 0;
    if (file_count > 0) {
        first_start = PyLong_AsLongLong(PyTuple_GET_ITEM(PyList_GET_ITEM(files, 0), 0));
        if (first_start == -1 && PyErr_Occurred()) goto out;
    }
    const unsigned char *entry = rows.buf;
    for (; scanned < entries; scanned++, entry += 20) {
        long long phys = (long long)((uint64_t)get32(entry) << 32 | get32(entry + 4));
        int32_t size = (int32_t)get32(entry + 8);
        int64_t code = (int64_t)((uint64_t)get32(entry + 12) << 32 | get32(entry + 16));
        Py_ssize_t count = PyList_GET_SIZE(records);
        if (total && count && (count >= max_nums || total + size > max_bytes || count >= max_count)) break;
        if (tag_codes != Py_None) {
            PyObject *key = PyLong_FromLong((long)(int32_t)code);
            int found = key ? PySet_Contains(tag_codes, key) : -1;
            Py_XDECREF(key);
            if (found < 0) goto out;
            if (!found) continue;
        }
        Py_ssize_t index = -1;
        if (file_count > 0 && phys >= first_start && file_size > 0) {
            long long at = (phys - first_start) / file_size;
            if (at < file_count) index = (Py_ssize_t)at;
        }
        PyObject *raw = NULL;
        if (index >= 0) {
            PyObject *file = PyList_GET_ITEM(files, index);
            long long start = PyLong_AsLongLong(PyTuple_GET_ITEM(file, 0));
            long long wrote = PyLong_AsLongLong(PyTuple_GET_ITEM(file, 1));
            if (PyErr_Occurred()) goto out;
            long long pos = phys - start;
            if (pos + size <= wrote) {
                if (index != mapped_index) {
                    if (mapped_index >= 0) PyBuffer_Release(&mapping);
                    mapped_index = -1;
                    if (PyObject_GetBuffer(PyTuple_GET_ITEM(file, 2), &mapping, PyBUF_SIMPLE) < 0) goto out;
                    mapped_index = index;
                }
                /* a slice of the mapping, as Python's: empty for a negative size, cut at the mapping's end */
                long long end = size > 0 ? pos + size : pos;
                if (end > mapping.len) end = mapping.len;
                if (pos > end) pos = end;
                raw = PyBytes_FromStringAndSize((const char *)mapping.buf + pos, (Py_ssize_t)(end - pos));
                if (raw == NULL) goto out;
            }
        }
        if (raw == NULL) {
            missing = 1;
            continue;
        }
        PyObject *delta = PyLong_FromSsize_t(scanned);
        if (delta == NULL || PyList_Append(records, raw) < 0 || PyList_Append(deltas, delta) < 0) {
            Py_DECREF(raw);
            Py_XDECREF(delta);
            goto out;
        }
        Py_DECREF(raw);
        Py_DECREF(delta);
        total += size;
    }
    result = Py_BuildValue("(nOOO)", scanned, records, deltas, missing ? Py_True : Py_False);
out:
    if (mapped_index >= 0) PyBuffer_Release(&mapping);
    Py_XDECREF(records);
    Py_XDECREF(deltas);
    PyBuffer_Release(&rows);
    return result;
}

/* count_records(body) -> int: the records of a pull body, each starting with its total size. */
static PyObject *count_records(PyObject *self, PyObject *arg) {
    Py_buffer body;
    if (PyObject_GetBuffer(arg, &body, PyBUF_SIMPLE) < 0) return NULL;
    long long count = 0;
    Py_ssize_t position = 0;
    while (position + 4 <= body.len) {
        int32_t size = (int32_t)get32((const unsigned char *)body.buf + position);
        if (size <= 0) break;
        position += size;
        count++;
    }
    PyBuffer_Release(&body);
    return PyLong_FromLongLong(count);
}

/* ------------------------------------------------------------------ store tables */

#define MAX_MAGICS 8

/* message_starts(view, pos, stop, base, limit, layout) -> (starts, resume):
 * codec.store.starts.message_starts, the starts as native int64 bytes. ``layout`` is (magics, magic position,
 * SYSFLAG position, PHYSICALOFFSET position, shortest record, extra bytes of an IPv6 host), from the spec.
 * One pass makes the walk's checks and the batch checks of the pure function's ``accepted`` per record: a
 * record failing either ends the walk there, as the pure function's cut at the first refused start does.
 * None (the pure function decides) for a negative ``pos``. */
static PyObject *message_starts(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, stop, limit, magic_at, flag_at, physical_at, shortest, v6_extra;
    long long base;
    PyObject *magic_list;
    if (!PyArg_ParseTuple(args, "y*nnLn(O!nnnnn)", &view, &pos, &stop, &base, &limit, &PyTuple_Type, &magic_list,
                          &magic_at, &flag_at, &physical_at, &shortest, &v6_extra)) return NULL;
    PyObject *result = NULL;
    int64_t *found = NULL;
    uint32_t magics[MAX_MAGICS];
    Py_ssize_t magic_count = PyTuple_GET_SIZE(magic_list);
    if (unconfigured()) goto out;
    if (pos < 0 || magic_count > MAX_MAGICS || magic_at + 4 > shortest || flag_at + 4 > shortest
        || physical_at + 8 > shortest) {
        result = Py_None;
        Py_INCREF(result);
        goto out;
    }
    for (Py_ssize_t i = 0; i < magic_count; i++) {
        magics[i] = (uint32_t)PyLong_AsUnsignedLong(PyTuple_GET_ITEM(magic_list, i));
        if (PyErr_Occurred()) goto out;
    }
    const unsigned char *buf = view.buf;
    Py_ssize_t size = view.len, count = 0, capacity = limit < 1024 ? (limit > 0 ? limit : 1) : 1024;
    found = PyMem_Malloc((size_t)capacity * sizeof(int64_t));
    if (found == NULL) { PyErr_NoMemory(); goto out; }
    Py_ssize_t at = pos;
    while (at < stop && count < limit && size - at >= shortest) {
        const unsigned char *record = buf + at;
        int32_t total = (int32_t)get32(record);
        uint32_t magic = get32(record + magic_at);
        int known = 0;
        for (Py_ssize_t i = 0; i < magic_count; i++) known |= magic == magics[i];
        if (!known || total < shortest || total > size - at) break;
        int32_t flags = (int32_t)get32(record + flag_at);
        Py_ssize_t body_at = shortest + (flags & spec.born_v6 ? v6_extra : 0) + (flags & spec.store_v6 ? v6_extra : 0);
        int64_t physical = (int64_t)((uint64_t)get32(record + physical_at) << 32 | get32(record + physical_at + 4));
        if (body_at > total || physical != base + at) break;
        if (count == capacity) {
            capacity *= 2;
            int64_t *grown = PyMem_Realloc(found, (size_t)capacity * sizeof(int64_t));
            if (grown == NULL) { PyErr_NoMemory(); goto out; }
            found = grown;
        }
        found[count++] = at;
        at += total;
    }
    result = Py_BuildValue("(y#n)", (const char *)found, count * (Py_ssize_t)sizeof(int64_t), at);
out:
    PyMem_Free(found);
    PyBuffer_Release(&view);
    return result;
}

/* leading_texts(view, at, lengths) -> int: how many leading ranges [at[i], at[i] + lengths[i]) of ``view``
 * (``at`` and ``lengths`` native int64 bytes) are strict UTF-8 (codec.store.columns.leading_texts). None
 * (the pure function decides) for a range outside the view or arrays of unequal length. */
static PyObject *leading_texts(PyObject *self, PyObject *args) {
    Py_buffer view, at, lengths;
    if (!PyArg_ParseTuple(args, "y*y*y*", &view, &at, &lengths)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t count = at.len / (Py_ssize_t)sizeof(int64_t), good = 0;
    if (at.len != lengths.len || at.len % (Py_ssize_t)sizeof(int64_t)) goto decline;
    const int64_t *starts = at.buf, *widths = lengths.buf;
    for (; good < count; good++) {
        int64_t start = starts[good], width = widths[good];
        if (start < 0 || width < 0 || start > view.len || width > view.len - start) goto decline;
        if (!utf8_valid((const unsigned char *)view.buf + start, (Py_ssize_t)width)) break;
    }
    result = PyLong_FromSsize_t(good);
    goto out;
decline:
    result = Py_None;
    Py_INCREF(result);
out:
    PyBuffer_Release(&view);
    PyBuffer_Release(&at);
    PyBuffer_Release(&lengths);
    return result;
}

/* ------------------------------------------------------------------ declining twins */

/* declining(fast, pure): a callable that answers fast(*args), or pure(*args) where fast declines with None
 * (hotpath.twin). Called on every send; a Python wrapper would add a frame and an argument tuple per call. */
typedef struct {
    PyObject_HEAD
    PyObject *fast, *pure;
    vectorcallfunc vectorcall;
} Declining;

static PyObject *declining_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Declining *self = (Declining *)callable;
    PyObject *result = PyObject_Vectorcall(self->fast, args, nargsf, kwnames);
    if (result != Py_None) return result;
    Py_DECREF(result);
    return PyObject_Vectorcall(self->pure, args, nargsf, kwnames);
}

static int declining_traverse(Declining *self, visitproc visit, void *arg) {
    Py_VISIT(self->fast);
    Py_VISIT(self->pure);
    return 0;
}

static void declining_dealloc(Declining *self) {
    PyObject_GC_UnTrack(self);
    Py_CLEAR(self->fast);
    Py_CLEAR(self->pure);
    PyObject_GC_Del(self);
}

static PyObject *declining_doc(Declining *self, void *closure) {
    return PyObject_GetAttrString(self->pure, "__doc__");
}

static PyGetSetDef declining_getset[] = {
    {"__doc__", (getter)declining_doc, NULL, "The pure function's docstring.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef declining_members[] = {
    {"fast", T_OBJECT_EX, offsetof(Declining, fast), READONLY, "The compiled function, tried first."},
    {"pure", T_OBJECT_EX, offsetof(Declining, pure), READONLY, "The pure function, called where it declines."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject DecliningType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "rocketmq_spec.codec._hotpath.Declining",
    .tp_basicsize = sizeof(Declining),
    .tp_dealloc = (destructor)declining_dealloc,
    .tp_vectorcall_offset = offsetof(Declining, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_traverse = (traverseproc)declining_traverse,
    .tp_members = declining_members,
    .tp_getset = declining_getset,
};

static PyObject *declining(PyObject *self, PyObject *args) {
    PyObject *fast, *pure;
    if (!PyArg_ParseTuple(args, "OO", &fast, &pure)) return NULL;
    Declining *made = PyObject_GC_New(Declining, &DecliningType);
    if (made == NULL) return NULL;
    Py_INCREF(fast);
    Py_INCREF(pure);
    made->fast = fast;
    made->pure = pure;
    made->vectorcall = declining_vectorcall;
    PyObject_GC_Track(made);
    return (PyObject *)made;
}

/* ------------------------------------------------------------------ module */

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "Set the spec's constants the other functions use."},
    {"scan_request", scan_request, METH_VARARGS, "A request's code, opaque, typed header and body, or None."},
    {"parse_properties", parse_properties, METH_O, "A properties string's map (spec.properties rules)."},
    {"encode_properties", encode_properties, METH_VARARGS, "A property map's string (spec.properties rules)."},
    {"pack_plain_record", (PyCFunction)(void (*)(void))pack_plain_record, METH_FASTCALL, "A v1 CommitLog record with size and CRC."},
    {"java_string_hash", java_string_hash, METH_O, "Java String.hashCode."},
    {"put_index_keys", put_index_keys, METH_VARARGS, "One record's index keys, written with the header."},
    {"join_answer", join_answer, METH_VARARGS, "A JSON answer frame joined from a template."},
    {"gather_records", gather_records, METH_VARARGS, "The records a pull's consume-queue entries point at."},
    {"count_records", count_records, METH_O, "The records of a pull body."},
    {"message_starts", message_starts, METH_VARARGS, "Where consecutive CommitLog records begin."},
    {"leading_texts", leading_texts, METH_VARARGS, "How many leading byte ranges are UTF-8."},
    {"declining", declining, METH_VARARGS, "fast(*args), or pure(*args) where fast answers None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "rocketmq_spec.codec._hotpath",
                                    "Compiled twins of the broker's per-send codec work.", -1, methods};

PyMODINIT_FUNC PyInit__hotpath(void) {
    crc_init();
    if (PyType_Ready(&DecliningType) < 0) return NULL;
    return PyModule_Create(&module);
}
