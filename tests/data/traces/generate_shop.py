#!/usr/bin/env python3
"""Writes one trace export of the `shop` demo in each format retrylint reads:
OTLP/JSON (otlp.json), Jaeger query-API JSON (jaeger.json), Zipkin v2 JSON
(zipkin.json). No real export of a multi-service demo in these formats could be
found with a licence to copy, so these are generated; the same traces are
written three ways. Deterministic: run it again and the files are identical.

The demo: frontend -> cart (GET), frontend -> checkout (POST),
checkout -> cart (GET), checkout -> payments (POST). Own work per request:
frontend 2 ms, cart 5 ms, checkout 10 ms, payments 20 ms. Ten traces; in
traces 3 and 7 checkout's first POST to payments fails (503) and is sent
again (a second client span under the same parent, with
http.request.resend_count 1 in the new semantic conventions). Each span
carries its HTTP status as its format writes it (OTLP
`http.response.status_code` and status ERROR on the failure; Jaeger's
`http.status_code` and `error: true`; Zipkin's `http.status_code` and an
`error` tag, the failure only, as Brave tags a 2xx with no status).
"""
import json

OWN = {"frontend": 2, "cart": 5, "checkout": 10, "payments": 20}
T0 = 1_700_000_000_000_000  # microseconds


def tree(retry):
    """(service, method, children) for one request to frontend."""
    pay = [("payments", "POST", [])] * (2 if retry else 1)
    checkout = ("checkout", "POST", [("cart", "GET", [])] + pay)
    return ("frontend", "GET", [("cart", "GET", []), checkout])


def total(node):
    service, _, children = node
    return OWN[service] + sum(total(c) for c in children)


def spans_of(trace_no):
    """Flat spans: dicts with ids, parent, service, kind, start, duration (µs)."""
    out = []
    counter = [0]

    def new_id():
        counter[0] += 1
        return f"{trace_no:04x}{counter[0]:012x}"

    def server(node, parent, start, status=200):
        service, method, children = node
        sid = new_id()
        dur = total(node) * 1000
        out.append(dict(id=sid, parent=parent, service=service, kind="server",
                        start=start, dur=dur, method=method, resend=None, status=status))
        t = start + OWN[service] * 1000
        seen = {}
        for child in children:
            n = seen.get(child[0], 0)
            seen[child[0]] = n + 1
            cid = new_id()
            cdur = total(child) * 1000
            resend_count = n if child[0] == "payments" and n > 0 else None
            # The first of two POSTs to payments is the one that failed.
            failed = child[0] == "payments" and n == 0 and retrying
            status = 503 if failed else 200
            out.append(dict(id=cid, parent=sid, service=service, kind="client",
                            start=t, dur=cdur, method=child[1], resend=resend_count,
                            status=status))
            server(child, cid, t, status)
            t += cdur
        return sid

    retrying = trace_no in (3, 7)
    server(tree(retrying), None, T0 + trace_no * 1_000_000)
    return out


TRACES = [(f"{n + 1:032x}", spans_of(n)) for n in range(10)]


def otlp():
    by_service = {}
    for trace_id, spans in TRACES:
        for s in spans:
            attrs = [{"key": "http.request.method" if s["service"] != "cart" else "http.method",
                      "value": {"stringValue": s["method"]}}]
            if s["resend"]:
                attrs.append({"key": "http.request.resend_count", "value": {"intValue": str(s["resend"])}})
            attrs.append({"key": "http.response.status_code" if s["service"] != "cart" else "http.status_code",
                          "value": {"intValue": str(s["status"])}})
            by_service.setdefault(s["service"], []).append({
                "traceId": trace_id,
                "spanId": s["id"],
                "parentSpanId": s["parent"] or "",
                "name": s["method"],
                "kind": 2 if s["kind"] == "server" else 3,
                "startTimeUnixNano": str(s["start"] * 1000),
                "endTimeUnixNano": str((s["start"] + s["dur"]) * 1000),
                "attributes": attrs,
                "status": {"code": 2} if s["status"] >= 500 else {},
            })
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": name}}]},
        "scopeSpans": [{"scope": {"name": "shop-demo"}, "spans": spans}],
    } for name, spans in by_service.items()]}


def jaeger():
    data = []
    for trace_id, spans in TRACES:
        names = []
        for s in spans:
            if s["service"] not in names:
                names.append(s["service"])
        pid = {n: f"p{i + 1}" for i, n in enumerate(names)}
        data.append({
            "traceID": trace_id,
            "spans": [{
                "traceID": trace_id,
                "spanID": s["id"],
                "operationName": s["method"],
                "references": [] if not s["parent"] else
                [{"refType": "CHILD_OF", "traceID": trace_id, "spanID": s["parent"]}],
                "startTime": s["start"],
                "duration": s["dur"],
                "tags": [{"key": "span.kind", "type": "string", "value": s["kind"]},
                         {"key": "http.method", "type": "string", "value": s["method"]},
                         {"key": "http.status_code", "type": "int64", "value": s["status"]}]
                + ([{"key": "error", "type": "bool", "value": True}] if s["status"] >= 500 else []),
                "logs": [],
                "processID": pid[s["service"]],
                "warnings": None,
            } for s in spans],
            "processes": {pid[n]: {"serviceName": n, "tags": []} for n in names},
            "warnings": None,
        })
    return {"data": data, "total": 0, "limit": 0, "offset": 0, "errors": None}


def zipkin():
    out = []
    for trace_id, spans in TRACES:
        trace = []
        for s in spans:
            span = {
                "traceId": trace_id,
                "id": s["id"],
                "kind": s["kind"].upper(),
                "name": s["method"].lower(),
                "timestamp": s["start"],
                "duration": s["dur"],
                "localEndpoint": {"serviceName": s["service"]},
                "tags": {"http.method": s["method"]},
            }
            if s["status"] >= 500:
                span["tags"]["http.status_code"] = str(s["status"])
                span["tags"]["error"] = str(s["status"])
            if s["parent"]:
                span["parentId"] = s["parent"]
            trace.append(span)
        out.append(trace)
    return out


for name, doc in [("otlp.json", otlp()), ("jaeger.json", jaeger()), ("zipkin.json", zipkin())]:
    with open(name, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
