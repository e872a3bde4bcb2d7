#!/usr/bin/env python3
"""Cashgate merchant API in Python 3, standard library only.

1. Reproduces every worked signing vector of a signing-vectors.json file (path as the first
   argument or in CASHGATE_SIGNING_VECTORS) and exits 1 on any mismatch.
2. With CASHGATE_BASE_URL, CASHGATE_ACCESS_KEY and CASHGATE_SECRET_KEY set: reads the Brazil
   balance (a signed GET), creates a Brazil PIX collection whose notifyUrl is a receiver this
   program runs, queries it, pays it with the sandbox panel of its cashier page, receives the signed
   payment callback, verifies its sign and its timestamp's freshness, and queries the order again.

Prints one JSON summary on stdout; exits 0 only when every step passed. See docs/examples.md.
"""

import base64
import hashlib
import hmac
import http.server
import json
import os
import queue
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

# ---------------------------------------------------------------------------------------------
# JSON that keeps numbers as written, so a value is signed exactly as it was sent.


class RawNumber(str):
    """A JSON number kept as its text (no float rounding)."""


def parse_json(text):
    """Parses JSON; objects keep their key order, numbers stay RawNumber text."""
    return json.loads(text, parse_float=RawNumber, parse_int=RawNumber, parse_constant=_no_constant)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def compact_json(value):
    """Compact JSON text, as JavaScript's JSON.stringify writes it (non-ASCII kept as is)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, RawNumber):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        raise TypeError("amounts and other numbers are decimal strings here, never floats")
    if isinstance(value, list):
        return "[" + ",".join(compact_json(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + compact_json(v) for k, v in value.items()) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


# ---------------------------------------------------------------------------------------------
# Signing (docs/api.md "Signing a request"): body members or query parameters, plus access_key, timestamp
# and nonce; null and "" left out, never sign; sorted by key in byte order; k=v joined with &.


def _encode_value(value):
    if value is None or value == "":
        return None
    if isinstance(value, str):  # a string as it is (RawNumber: its JSON text)
        return str(value)
    return compact_json(value)  # booleans, numbers, objects and arrays as compact JSON


def string_to_sign(params, access_key, timestamp, nonce):
    entries = {}
    for key, value in (params or {}).items():
        if key == "sign":
            continue
        encoded = _encode_value(value)
        if encoded is not None:
            entries[key] = encoded
    for key, value in (("access_key", access_key), ("timestamp", timestamp), ("nonce", nonce)):
        encoded = _encode_value(value)
        if encoded is None:
            entries.pop(key, None)
        else:
            entries[key] = encoded
    ordered = sorted(entries, key=lambda k: k.encode("utf-8"))
    return "&".join(f"{key}={entries[key]}" for key in ordered)


def sign_string(secret_key, text):
    digest = hmac.new(secret_key.encode("utf-8"), text.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def compute_sign(secret_key, params, access_key, timestamp, nonce):
    return sign_string(secret_key, string_to_sign(params, access_key, timestamp, nonce))


def verify_callback(secret_key, access_key, raw_body, headers, tolerance_ms, now_ms=None):
    """Checks a callback: the access key, the sign over the raw body's members, and freshness.

    Returns (ok, reason, details)."""
    got = {name: headers.get(name) for name in ("access_key", "timestamp", "nonce", "sign")}
    missing = [name for name, value in got.items() if not value]
    if missing:
        return False, "missing headers: " + ", ".join(missing), {}
    if got["access_key"] != access_key:
        return False, f"access_key {got['access_key']} is not ours", {}
    try:
        body = parse_json(raw_body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        return False, f"body is not JSON: {error}", {}
    if not isinstance(body, dict):
        return False, "body is not a JSON object", {}
    expected = compute_sign(secret_key, body, got["access_key"], got["timestamp"], got["nonce"])
    if not hmac.compare_digest(expected.encode("utf-8"), got["sign"].encode("utf-8")):
        return False, "sign does not match", {"body": body}
    if not (got["timestamp"].isdigit() and len(got["timestamp"]) == 13):
        return False, "timestamp is not 13-digit milliseconds", {"body": body}
    age_ms = (int(time.time() * 1000) if now_ms is None else now_ms) - int(got["timestamp"])
    if abs(age_ms) > tolerance_ms:
        return False, f"timestamp is {age_ms} ms from now (tolerance {tolerance_ms} ms)", {"body": body, "ageMs": age_ms}
    return True, "verified", {"body": body, "ageMs": age_ms}


# ---------------------------------------------------------------------------------------------
# Step 1: the worked vectors.


def check_vectors(path):
    with open(path, "rb") as file:
        fixture = parse_json(file.read().decode("utf-8"))
    failures = []
    for vector in fixture["vectors"]:
        text = string_to_sign(vector["params"], fixture["access_key"], vector["timestamp"], vector["nonce"])
        sign = sign_string(fixture["secret_key"], text)
        if text != vector["stringToSign"]:
            failures.append({"name": vector["name"], "field": "stringToSign", "expected": vector["stringToSign"], "got": text})
        elif sign != vector["sign"]:
            failures.append({"name": vector["name"], "field": "sign", "expected": vector["sign"], "got": sign})
    return {"total": len(fixture["vectors"]), "passed": len(fixture["vectors"]) - len(failures), "failures": failures}


# ---------------------------------------------------------------------------------------------
# Step 2: a signed conversation with a running Cashgate.


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


OPENER = urllib.request.build_opener(NoRedirect)


def http_call(method, url, body=None, headers=None):
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with OPENER.open(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class Client:
    def __init__(self, base_url, access_key, secret_key):
        self.base_url = base_url.rstrip("/")
        self.access_key = access_key
        self.secret_key = secret_key

    def _headers(self, params):
        timestamp = str(int(time.time() * 1000))
        nonce = str(uuid.uuid4())
        return {
            "access_key": self.access_key,
            "timestamp": timestamp,
            "nonce": nonce,
            "sign": compute_sign(self.secret_key, params, self.access_key, timestamp, nonce),
        }

    def post(self, path, params):
        # The bytes sent are the JSON of exactly the map that was signed.
        body = compact_json(params).encode("utf-8")
        headers = {**self._headers(params), "content-type": "application/json;charset=utf-8"}
        return self._envelope(*http_call("POST", self.base_url + path, body, headers))

    def get(self, path, query=None):
        url = self.base_url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        return self._envelope(*http_call("GET", url, None, self._headers(query)))

    @staticmethod
    def _envelope(status, raw):
        try:
            envelope = parse_json(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise StepError(f"HTTP {status}, not JSON: {raw[:200]!r}")
        if status != 200 or envelope.get("code") != "200":
            raise StepError(f"HTTP {status}, code {envelope.get('code')}: {envelope.get('msgEn')}")
        return envelope["data"]


class StepError(Exception):
    pass


class CallbackReceiver:
    """A local HTTP server that verifies every callback and answers 200 only to authentic ones."""

    def __init__(self, host, port, secret_key, access_key, tolerance_ms):
        self.callbacks = queue.Queue()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                ok, reason, details = verify_callback(secret_key, access_key, raw, self.headers, tolerance_ms)
                answer = b'{"code":"200","success":true}' if ok else json.dumps({"code": "307", "success": False, "msgEn": reason}).encode()
                self.send_response(200 if ok else 401)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                receiver.callbacks.put({"ok": ok, "reason": reason, "raw": raw, "notifyId": self.headers.get("notify_id"), "headers": {k.lower(): v for k, v in self.headers.items()}, **details})

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer((host, port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def run_live(config, summary):
    client = Client(config["base_url"], config["access_key"], config["secret_key"])
    receiver = CallbackReceiver(config["callback_host"], config["callback_port"], config["secret_key"], config["access_key"], config["tolerance_ms"])
    notify_url = config["notify_url"] or f"http://{config['callback_host']}:{receiver.port}/cashgate/callback"
    print(f"callback receiver listening on {config['callback_host']}:{receiver.port}, notifyUrl {notify_url}", file=sys.stderr)
    steps = summary["steps"]
    try:
        balances = client.get("/api/v3/bra/query/balance")
        steps["balance"] = {"ok": True, "currencies": [b["currencyType"] for b in balances]}

        external_order_id = f"PY-{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}"
        amount = "100.50"  # money is a decimal string, never a float
        created = client.post(
            "/api/v3/bra/createCollectingOrder",
            {"amount": amount, "channelType": "PIX", "externalOrderId": external_order_id, "notifyUrl": notify_url, "remark": "Cashgate Python example"},
        )
        order = created["currencyOrderVo"]
        order_id = order["orderId"]
        summary.update({"orderId": order_id, "externalOrderId": external_order_id})
        if order["amount"] != amount or int(order["orderStatusCode"]) != 1:
            raise StepError(f"unexpected create result: {compact_json(order)}")
        steps["create"] = {"ok": True, "orderId": order_id, "cashierId": created["cashierId"], "orderStatusCode": int(order["orderStatusCode"])}

        records = client.post("/api/v3/bra/query/collectingOrder", {"externalOrderId": external_order_id, "orderId": order_id})
        if len(records) != 1 or records[0]["orderId"] != order_id or int(records[0]["orderStatus"]) != 1:
            raise StepError(f"unexpected query result: {compact_json(records)}")
        steps["query"] = {"ok": True, "orderStatus": int(records[0]["orderStatus"]), "orderAmount": records[0]["orderAmount"]}

        # The sandbox panel of the cashier page plays the payer: a form post answered with 303.
        pay_url = f"{client.base_url}/cashier/{urllib.parse.quote(created['cashierId'])}/sandbox"
        status, _ = http_call("POST", pay_url, b"action=paid", {"content-type": "application/x-www-form-urlencoded"})
        if status != 303:
            raise StepError(f"sandbox pay answered HTTP {status} (is CASHGATE_SANDBOX on?)")
        steps["pay"] = {"ok": True, "via": "cashier sandbox panel"}

        deadline = time.monotonic() + config["callback_timeout_ms"] / 1000
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StepError(f"no callback for {order_id} within {config['callback_timeout_ms']} ms")
            try:
                got = receiver.callbacks.get(timeout=remaining)
            except queue.Empty:
                continue
            body = got.get("body")
            if isinstance(body, dict) and body.get("orderId") not in (None, order_id):
                continue  # a callback for another order
            if not got["ok"]:
                steps["callback"] = {"ok": False, "reason": got["reason"], "ageMs": got.get("ageMs")}
                raise StepError(f"callback rejected: {got['reason']}")
            if int(body["orderStatusCode"]) != 2 or body["orderActualAmount"] != amount:
                raise StepError(f"unexpected callback payload: {got['raw'].decode('utf-8')}")
            # The same verification must refuse a body changed in transit.
            tampered = got["raw"].replace(b'"orderActualAmount":"' + amount.encode(), b'"orderActualAmount":"999.99"')
            tampered_ok, _, _ = verify_callback(config["secret_key"], config["access_key"], tampered, got["headers"], config["tolerance_ms"])
            steps["callback"] = {
                "ok": True,
                "verified": True,
                "fresh": True,
                "ageMs": got["ageMs"],
                "notifyId": got["notifyId"],
                "orderStatusCode": int(body["orderStatusCode"]),
                "orderActualAmount": body["orderActualAmount"],
                "tamperedBodyRejected": tampered != got["raw"] and not tampered_ok,
            }
            if not steps["callback"]["tamperedBodyRejected"]:
                raise StepError("a tampered callback body was not rejected")
            break

        records = client.post("/api/v3/bra/query/collectingOrder", {"externalOrderId": external_order_id, "orderId": order_id})
        if int(records[0]["orderStatus"]) != 2:
            raise StepError(f"order not paid after the callback: {compact_json(records[0])}")
        steps["queryAfterPayment"] = {"ok": True, "orderStatus": 2, "orderActualAmount": records[0]["orderActualAmount"]}
        return True
    except (StepError, urllib.error.URLError, OSError, KeyError, TypeError, ValueError) as error:
        summary["error"] = f"{type(error).__name__}: {error}" if not isinstance(error, StepError) else str(error)
        return False
    finally:
        receiver.close()


def main(argv):
    vectors_path = argv[1] if len(argv) > 1 else os.environ.get("CASHGATE_SIGNING_VECTORS")
    summary = {"language": "python", "ok": False}
    if not vectors_path:
        summary["error"] = "give the signing vectors file as the first argument or in CASHGATE_SIGNING_VECTORS"
        print(json.dumps(summary, separators=(",", ":")))
        return 2
    summary["vectors"] = check_vectors(vectors_path)
    vectors_ok = not summary["vectors"]["failures"]
    base_url = os.environ.get("CASHGATE_BASE_URL", "")
    if not base_url:
        summary["live"] = "skipped: CASHGATE_BASE_URL is not set"
        summary["ok"] = vectors_ok
        print(json.dumps(summary, ensure_ascii=False, separators=(",", ":")))
        return 0 if vectors_ok else 1
    if not vectors_ok:
        summary["error"] = "signing vectors do not match: not calling the server"
        print(json.dumps(summary, ensure_ascii=False, separators=(",", ":")))
        return 1
    missing = [name for name in ("CASHGATE_ACCESS_KEY", "CASHGATE_SECRET_KEY") if not os.environ.get(name)]
    if missing:
        summary["error"] = "set " + " and ".join(missing)
        print(json.dumps(summary, separators=(",", ":")))
        return 2
    config = {
        "base_url": base_url,
        "access_key": os.environ["CASHGATE_ACCESS_KEY"],
        "secret_key": os.environ["CASHGATE_SECRET_KEY"],
        "callback_host": os.environ.get("CASHGATE_CALLBACK_HOST", "127.0.0.1"),
        "callback_port": int(os.environ.get("CASHGATE_CALLBACK_PORT", "0")),
        "notify_url": os.environ.get("CASHGATE_NOTIFY_URL", ""),
        "tolerance_ms": int(os.environ.get("CASHGATE_CALLBACK_TOLERANCE_MS", "300000")),
        "callback_timeout_ms": int(os.environ.get("CASHGATE_CALLBACK_TIMEOUT_MS", "30000")),
    }
    summary["steps"] = {}
    summary["ok"] = run_live(config, summary)
    print(json.dumps(summary, ensure_ascii=False, separators=(",", ":"), default=str))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
