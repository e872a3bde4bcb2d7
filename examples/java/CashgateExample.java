// Cashgate merchant API in Java 17, one file, JDK only: run it with `java CashgateExample.java`.
//
// 1. Reproduces every worked signing vector of a signing-vectors.json file (path as the first
//    argument or in CASHGATE_SIGNING_VECTORS) and exits 1 on any mismatch.
// 2. With CASHGATE_BASE_URL, CASHGATE_ACCESS_KEY and CASHGATE_SECRET_KEY set: reads the Brazil
//    balance (a signed GET), creates a Brazil PIX collection whose notifyUrl is a receiver this
//    program runs, queries it, pays it with the sandbox panel of its cashier page, receives the
//    signed payment callback, verifies its sign and its timestamp's freshness, and queries the
//    order again.
//
// Prints one JSON summary on stdout; exits 0 only when every step passed. See docs/examples.md.

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

public class CashgateExample {

  // -------------------------------------------------------------------------------------------
  // A minimal JSON reader and writer. Objects are LinkedHashMaps (key order kept), arrays Lists,
  // strings Strings, true/false Booleans, null null, and numbers RawNumber: their text as written,
  // so a value is signed exactly as it was sent. The writer writes what JSON.stringify writes.

  /** A JSON number kept as its text (no double rounding). */
  record RawNumber(String text) {
    @Override
    public String toString() {
      return text;
    }
  }

  static final class JsonReader {
    private final String s;
    private int i;

    private JsonReader(String s) {
      this.s = s;
    }

    static Object parse(String text) {
      JsonReader reader = new JsonReader(text);
      reader.space();
      Object value = reader.value();
      reader.space();
      if (reader.i != text.length()) throw reader.error("text after the JSON value");
      return value;
    }

    private IllegalArgumentException error(String what) {
      return new IllegalArgumentException("bad JSON at " + i + ": " + what);
    }

    private void space() {
      while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
    }

    private void expect(char c) {
      if (i >= s.length() || s.charAt(i) != c) throw error("expected '" + c + "'");
      i++;
    }

    private Object value() {
      if (i >= s.length()) throw error("unexpected end");
      char c = s.charAt(i);
      switch (c) {
        case '{': {
          i++;
          Map<String, Object> map = new LinkedHashMap<>();
          space();
          if (i < s.length() && s.charAt(i) == '}') {
            i++;
            return map;
          }
          while (true) {
            space();
            String key = string();
            space();
            expect(':');
            space();
            map.put(key, value());
            space();
            if (i < s.length() && s.charAt(i) == ',') {
              i++;
              continue;
            }
            expect('}');
            return map;
          }
        }
        case '[': {
          i++;
          List<Object> list = new ArrayList<>();
          space();
          if (i < s.length() && s.charAt(i) == ']') {
            i++;
            return list;
          }
          while (true) {
            space();
            list.add(value());
            space();
            if (i < s.length() && s.charAt(i) == ',') {
              i++;
              continue;
            }
            expect(']');
            return list;
          }
        }
        case '"':
          return string();
        case 't':
          return literal("true", Boolean.TRUE);
        case 'f':
          return literal("false", Boolean.FALSE);
        case 'n':
          return literal("null", null);
        default:
          return number();
      }
    }

    private Object literal(String word, Object result) {
      if (!s.startsWith(word, i)) throw error("expected " + word);
      i += word.length();
      return result;
    }

    private RawNumber number() {
      int start = i;
      if (i < s.length() && s.charAt(i) == '-') i++;
      int digits = i;
      while (i < s.length() && Character.isDigit(s.charAt(i))) i++;
      if (i == digits) throw error("expected a value");
      if (i < s.length() && s.charAt(i) == '.') {
        i++;
        int fraction = i;
        while (i < s.length() && Character.isDigit(s.charAt(i))) i++;
        if (i == fraction) throw error("expected digits after '.'");
      }
      if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
        i++;
        if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) i++;
        int exponent = i;
        while (i < s.length() && Character.isDigit(s.charAt(i))) i++;
        if (i == exponent) throw error("expected exponent digits");
      }
      return new RawNumber(s.substring(start, i));
    }

    private String string() {
      expect('"');
      StringBuilder out = new StringBuilder();
      while (true) {
        if (i >= s.length()) throw error("unterminated string");
        char c = s.charAt(i++);
        if (c == '"') return out.toString();
        if (c < 0x20) throw error("control character in string");
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (i >= s.length()) throw error("unterminated escape");
        char e = s.charAt(i++);
        switch (e) {
          case '"', '\\', '/' -> out.append(e);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (i + 4 > s.length()) throw error("short \\u escape");
            out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            i += 4;
          }
          default -> throw error("bad escape \\" + e);
        }
      }
    }
  }

  /** Compact JSON text, as JavaScript's JSON.stringify writes it (non-ASCII kept as is). */
  static String json(Object value) {
    StringBuilder out = new StringBuilder();
    writeJson(out, value);
    return out.toString();
  }

  private static void writeJson(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String text) {
      writeString(out, text);
    } else if (value instanceof Boolean || value instanceof RawNumber || value instanceof Integer || value instanceof Long) {
      out.append(value);
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        if (!first) out.append(',');
        first = false;
        writeString(out, String.valueOf(entry.getKey()));
        out.append(':');
        writeJson(out, entry.getValue());
      }
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int k = 0; k < list.size(); k++) {
        if (k > 0) out.append(',');
        writeJson(out, list.get(k));
      }
      out.append(']');
    } else {
      // Amounts are decimal strings; a double would lose digits.
      throw new IllegalArgumentException("cannot write " + value.getClass().getSimpleName() + " as JSON");
    }
  }

  private static void writeString(StringBuilder out, String text) {
    out.append('"');
    for (int k = 0; k < text.length(); k++) {
      char c = text.charAt(k);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          boolean loneSurrogate =
              Character.isHighSurrogate(c)
                  ? k + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(k + 1))
                  : Character.isLowSurrogate(c) && (k == 0 || !Character.isHighSurrogate(text.charAt(k - 1)));
          if (c < 0x20 || loneSurrogate) out.append(String.format("\\u%04x", (int) c));
          else out.append(c);
        }
      }
    }
    out.append('"');
  }

  // -------------------------------------------------------------------------------------------
  // Signing (docs/api.md "Signing a request"): body members or query parameters, plus access_key,
  // timestamp and nonce; null and "" left out, never sign; sorted by key in byte order; k=v
  // joined with &.

  private static String encodeValue(Object value) {
    if (value == null || "".equals(value)) return null;
    if (value instanceof String text) return text;
    return json(value); // numbers and booleans as JSON text, objects and arrays as compact JSON
  }

  static String stringToSign(Map<String, ?> params, String accessKey, String timestamp, String nonce) {
    Map<String, String> entries = new LinkedHashMap<>();
    if (params != null) {
      for (Map.Entry<String, ?> entry : params.entrySet()) {
        if (entry.getKey().equals("sign")) continue;
        String encoded = encodeValue(entry.getValue());
        if (encoded != null) entries.put(entry.getKey(), encoded);
      }
    }
    String[][] headers = {{"access_key", accessKey}, {"timestamp", timestamp}, {"nonce", nonce}};
    for (String[] header : headers) {
      String encoded = encodeValue(header[1]);
      if (encoded == null) entries.remove(header[0]);
      else entries.put(header[0], encoded);
    }
    List<String> keys = new ArrayList<>(entries.keySet());
    // Byte order of the UTF-8 keys (String.compareTo would compare UTF-16 units).
    keys.sort((a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8)));
    StringBuilder out = new StringBuilder();
    for (String key : keys) {
      if (out.length() > 0) out.append('&');
      out.append(key).append('=').append(entries.get(key));
    }
    return out.toString();
  }

  static String signString(String secretKey, String text) {
    try {
      Mac mac = Mac.getInstance("HmacSHA1");
      mac.init(new SecretKeySpec(secretKey.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
      return Base64.getEncoder().encodeToString(mac.doFinal(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException | InvalidKeyException e) {
      throw new IllegalStateException(e);
    }
  }

  static String computeSign(String secretKey, Map<String, ?> params, String accessKey, String timestamp, String nonce) {
    return signString(secretKey, stringToSign(params, accessKey, timestamp, nonce));
  }

  /** The outcome of checking one callback. */
  record Verification(boolean ok, String reason, Map<String, Object> body, Long ageMs) {}

  /** Checks a callback: the access key, the sign over the raw body's members, and freshness. */
  @SuppressWarnings("unchecked")
  static Verification verifyCallback(String secretKey, String accessKey, byte[] rawBody, Map<String, String> headers, long toleranceMs) {
    List<String> missing = new ArrayList<>();
    for (String name : List.of("access_key", "timestamp", "nonce", "sign")) {
      String value = headers.get(name);
      if (value == null || value.isEmpty()) missing.add(name);
    }
    if (!missing.isEmpty()) return new Verification(false, "missing headers: " + String.join(", ", missing), null, null);
    if (!headers.get("access_key").equals(accessKey))
      return new Verification(false, "access_key " + headers.get("access_key") + " is not ours", null, null);
    Object parsed;
    try {
      parsed = JsonReader.parse(new String(rawBody, StandardCharsets.UTF_8));
    } catch (IllegalArgumentException e) {
      return new Verification(false, "body is not JSON: " + e.getMessage(), null, null);
    }
    if (!(parsed instanceof Map)) return new Verification(false, "body is not a JSON object", null, null);
    Map<String, Object> body = (Map<String, Object>) parsed;
    String timestamp = headers.get("timestamp");
    String expected = computeSign(secretKey, body, headers.get("access_key"), timestamp, headers.get("nonce"));
    boolean same =
        MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), headers.get("sign").getBytes(StandardCharsets.UTF_8));
    if (!same) return new Verification(false, "sign does not match", body, null);
    if (!timestamp.matches("\\d{13}")) return new Verification(false, "timestamp is not 13-digit milliseconds", body, null);
    long ageMs = System.currentTimeMillis() - Long.parseLong(timestamp);
    if (Math.abs(ageMs) > toleranceMs)
      return new Verification(false, "timestamp is " + ageMs + " ms from now (tolerance " + toleranceMs + " ms)", body, ageMs);
    return new Verification(true, "verified", body, ageMs);
  }

  // -------------------------------------------------------------------------------------------
  // Step 1: the worked vectors.

  @SuppressWarnings("unchecked")
  static Map<String, Object> checkVectors(Path path) throws IOException {
    Map<String, Object> fixture = (Map<String, Object>) JsonReader.parse(Files.readString(path, StandardCharsets.UTF_8));
    List<Object> vectors = (List<Object>) fixture.get("vectors");
    String accessKey = (String) fixture.get("access_key");
    String secretKey = (String) fixture.get("secret_key");
    List<Object> failures = new ArrayList<>();
    for (Object item : vectors) {
      Map<String, Object> vector = (Map<String, Object>) item;
      String text =
          stringToSign((Map<String, Object>) vector.get("params"), accessKey, (String) vector.get("timestamp"), (String) vector.get("nonce"));
      String sign = signString(secretKey, text);
      Map<String, Object> failure = new LinkedHashMap<>();
      failure.put("name", vector.get("name"));
      if (!text.equals(vector.get("stringToSign"))) {
        failure.put("field", "stringToSign");
        failure.put("expected", vector.get("stringToSign"));
        failure.put("got", text);
        failures.add(failure);
      } else if (!sign.equals(vector.get("sign"))) {
        failure.put("field", "sign");
        failure.put("expected", vector.get("sign"));
        failure.put("got", sign);
        failures.add(failure);
      }
    }
    Map<String, Object> result = new LinkedHashMap<>();
    result.put("total", vectors.size());
    result.put("passed", vectors.size() - failures.size());
    result.put("failures", failures);
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // Step 2: a signed conversation with a running Cashgate.

  static final class StepError extends Exception {
    StepError(String message) {
      super(message);
    }
  }

  // Redirects are not followed (the default), HTTP/1.1 without an upgrade attempt.
  static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10)).build();

  static final class Client {
    final String baseUrl;
    private final String accessKey;
    private final String secretKey;

    Client(String baseUrl, String accessKey, String secretKey) {
      this.baseUrl = baseUrl.replaceAll("/+$", "");
      this.accessKey = accessKey;
      this.secretKey = secretKey;
    }

    private HttpRequest.Builder signed(URI uri, Map<String, ?> params) {
      String timestamp = Long.toString(System.currentTimeMillis());
      String nonce = UUID.randomUUID().toString();
      return HttpRequest.newBuilder(uri)
          .timeout(Duration.ofSeconds(30))
          .header("access_key", accessKey)
          .header("timestamp", timestamp)
          .header("nonce", nonce)
          .header("sign", computeSign(secretKey, params, accessKey, timestamp, nonce));
    }

    Object post(String path, Map<String, Object> params) throws StepError, IOException, InterruptedException {
      // The bytes sent are the JSON of exactly the map that was signed.
      HttpRequest request =
          signed(URI.create(baseUrl + path), params)
              .header("content-type", "application/json;charset=utf-8")
              .POST(HttpRequest.BodyPublishers.ofString(json(params), StandardCharsets.UTF_8))
              .build();
      return envelope(HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)));
    }

    Object get(String path, Map<String, String> query) throws StepError, IOException, InterruptedException {
      StringBuilder url = new StringBuilder(baseUrl + path);
      char separator = '?';
      for (Map.Entry<String, String> entry : query.entrySet()) {
        url.append(separator)
            .append(URLEncoder.encode(entry.getKey(), StandardCharsets.UTF_8))
            .append('=')
            .append(URLEncoder.encode(entry.getValue(), StandardCharsets.UTF_8));
        separator = '&';
      }
      HttpRequest request = signed(URI.create(url.toString()), query.isEmpty() ? null : query).GET().build();
      return envelope(HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)));
    }

    @SuppressWarnings("unchecked")
    private static Object envelope(HttpResponse<String> response) throws StepError {
      Map<String, Object> envelope;
      try {
        envelope = (Map<String, Object>) JsonReader.parse(response.body());
      } catch (IllegalArgumentException | ClassCastException e) {
        String body = response.body();
        throw new StepError("HTTP " + response.statusCode() + ", not JSON: " + body.substring(0, Math.min(200, body.length())));
      }
      if (response.statusCode() != 200 || !"200".equals(envelope.get("code")))
        throw new StepError("HTTP " + response.statusCode() + ", code " + envelope.get("code") + ": " + envelope.get("msgEn"));
      return envelope.get("data");
    }
  }

  /** One received callback and how it was judged. */
  record Received(Verification verification, byte[] raw, Map<String, String> headers) {}

  /** A local HTTP server that verifies every callback and answers 200 only to authentic ones. */
  static HttpServer startReceiver(String host, int port, String secretKey, String accessKey, long toleranceMs, BlockingQueue<Received> received)
      throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress(host, port), 0);
    server.createContext("/", exchange -> {
      try {
        byte[] raw;
        try (InputStream in = exchange.getRequestBody()) {
          raw = in.readAllBytes();
        }
        Headers requestHeaders = exchange.getRequestHeaders();
        Map<String, String> headers = new LinkedHashMap<>();
        for (String name : List.of("access_key", "timestamp", "nonce", "sign", "notify_id")) {
          String value = requestHeaders.getFirst(name);
          if (value != null) headers.put(name, value);
        }
        Verification verification = verifyCallback(secretKey, accessKey, raw, headers, toleranceMs);
        Map<String, Object> refusal = new LinkedHashMap<>();
        refusal.put("code", "307");
        refusal.put("success", false);
        refusal.put("msgEn", verification.reason());
        byte[] answer = (verification.ok() ? "{\"code\":\"200\",\"success\":true}" : json(refusal)).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("content-type", "application/json");
        exchange.sendResponseHeaders(verification.ok() ? 200 : 401, answer.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(answer);
        }
        received.add(new Received(verification, raw, headers));
      } finally {
        exchange.close();
      }
    });
    server.start();
    return server;
  }

  @SuppressWarnings("unchecked")
  static boolean runLive(Map<String, Object> config, Map<String, Object> summary) throws IOException {
    String accessKey = (String) config.get("accessKey");
    String secretKey = (String) config.get("secretKey");
    long toleranceMs = (Long) config.get("toleranceMs");
    long callbackTimeoutMs = (Long) config.get("callbackTimeoutMs");
    String callbackHost = (String) config.get("callbackHost");
    Client client = new Client((String) config.get("baseUrl"), accessKey, secretKey);
    BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    HttpServer receiver = startReceiver(callbackHost, (Integer) config.get("callbackPort"), secretKey, accessKey, toleranceMs, received);
    int port = receiver.getAddress().getPort();
    String notifyUrl = (String) config.get("notifyUrl");
    if (notifyUrl.isEmpty()) notifyUrl = "http://" + callbackHost + ":" + port + "/cashgate/callback";
    System.err.println("callback receiver listening on " + callbackHost + ":" + port + ", notifyUrl " + notifyUrl);
    Map<String, Object> steps = new LinkedHashMap<>();
    summary.put("steps", steps);
    try {
      List<Object> balances = (List<Object>) client.get("/api/v3/bra/query/balance", Map.of());
      List<Object> currencies = new ArrayList<>();
      for (Object balance : balances) currencies.add(((Map<String, Object>) balance).get("currencyType"));
      steps.put("balance", step("currencies", currencies));

      String externalOrderId = "JAVA-" + System.currentTimeMillis() + "-" + UUID.randomUUID().toString().substring(0, 8);
      String amount = "100.50"; // money is a decimal string, never a double
      Map<String, Object> create = new LinkedHashMap<>();
      create.put("amount", amount);
      create.put("channelType", "PIX");
      create.put("externalOrderId", externalOrderId);
      create.put("notifyUrl", notifyUrl);
      create.put("remark", "Cashgate Java example");
      Map<String, Object> created = (Map<String, Object>) client.post("/api/v3/bra/createCollectingOrder", create);
      Map<String, Object> order = (Map<String, Object>) created.get("currencyOrderVo");
      String orderId = (String) order.get("orderId");
      summary.put("orderId", orderId);
      summary.put("externalOrderId", externalOrderId);
      if (!amount.equals(order.get("amount")) || !"1".equals(String.valueOf(order.get("orderStatusCode"))))
        throw new StepError("unexpected create result: " + json(order));
      steps.put("create", step("orderId", orderId, "cashierId", created.get("cashierId"), "orderStatusCode", order.get("orderStatusCode")));

      Map<String, Object> query = new LinkedHashMap<>();
      query.put("externalOrderId", externalOrderId);
      query.put("orderId", orderId);
      List<Object> records = (List<Object>) client.post("/api/v3/bra/query/collectingOrder", query);
      Map<String, Object> record = records.size() == 1 ? (Map<String, Object>) records.get(0) : Map.of();
      if (!orderId.equals(record.get("orderId")) || !"1".equals(String.valueOf(record.get("orderStatus"))))
        throw new StepError("unexpected query result: " + json(records));
      steps.put("query", step("orderStatus", record.get("orderStatus"), "orderAmount", record.get("orderAmount")));

      // The sandbox panel of the cashier page plays the payer: a form post answered with 303.
      String cashierId = (String) created.get("cashierId");
      HttpRequest pay =
          HttpRequest.newBuilder(URI.create(client.baseUrl + "/cashier/" + URLEncoder.encode(cashierId, StandardCharsets.UTF_8) + "/sandbox"))
              .timeout(Duration.ofSeconds(30))
              .header("content-type", "application/x-www-form-urlencoded")
              .POST(HttpRequest.BodyPublishers.ofString("action=paid"))
              .build();
      int payStatus = HTTP.send(pay, HttpResponse.BodyHandlers.discarding()).statusCode();
      if (payStatus != 303) throw new StepError("sandbox pay answered HTTP " + payStatus + " (is CASHGATE_SANDBOX on?)");
      steps.put("pay", step("via", "cashier sandbox panel"));

      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(callbackTimeoutMs);
      while (true) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) throw new StepError("no callback for " + orderId + " within " + callbackTimeoutMs + " ms");
        Received got = received.poll(remaining, TimeUnit.NANOSECONDS);
        if (got == null) continue;
        Verification verification = got.verification();
        Map<String, Object> body = verification.body();
        if (body != null && body.get("orderId") != null && !orderId.equals(body.get("orderId"))) continue; // another order
        if (!verification.ok()) {
          Map<String, Object> refused = new LinkedHashMap<>();
          refused.put("ok", false);
          refused.put("reason", verification.reason());
          refused.put("ageMs", verification.ageMs());
          steps.put("callback", refused);
          throw new StepError("callback rejected: " + verification.reason());
        }
        if (!"2".equals(String.valueOf(body.get("orderStatusCode"))) || !amount.equals(body.get("orderActualAmount")))
          throw new StepError("unexpected callback payload: " + new String(got.raw(), StandardCharsets.UTF_8));
        // The same verification must refuse a body changed in transit.
        String raw = new String(got.raw(), StandardCharsets.UTF_8);
        String tampered = raw.replace("\"orderActualAmount\":\"" + amount + "\"", "\"orderActualAmount\":\"999.99\"");
        boolean tamperedRejected =
            !tampered.equals(raw)
                && !verifyCallback(secretKey, accessKey, tampered.getBytes(StandardCharsets.UTF_8), got.headers(), toleranceMs).ok();
        Map<String, Object> callback = step("verified", true, "fresh", true, "ageMs", verification.ageMs(), "notifyId", got.headers().get("notify_id"));
        callback.put("orderStatusCode", body.get("orderStatusCode"));
        callback.put("orderActualAmount", body.get("orderActualAmount"));
        callback.put("tamperedBodyRejected", tamperedRejected);
        steps.put("callback", callback);
        if (!tamperedRejected) throw new StepError("a tampered callback body was not rejected");
        break;
      }

      records = (List<Object>) client.post("/api/v3/bra/query/collectingOrder", query);
      Map<String, Object> after = (Map<String, Object>) records.get(0);
      if (!"2".equals(String.valueOf(after.get("orderStatus"))))
        throw new StepError("order not paid after the callback: " + json(after));
      steps.put("queryAfterPayment", step("orderStatus", 2, "orderActualAmount", after.get("orderActualAmount")));
      return true;
    } catch (StepError e) {
      summary.put("error", e.getMessage());
      return false;
    } catch (IOException | InterruptedException | RuntimeException e) {
      summary.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
      return false;
    } finally {
      receiver.stop(0);
    }
  }

  /** {"ok": true, k1: v1, ...} */
  private static Map<String, Object> step(Object... pairs) {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("ok", true);
    for (int k = 0; k < pairs.length; k += 2) map.put((String) pairs[k], pairs[k + 1]);
    return map;
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  @SuppressWarnings("unchecked")
  public static void main(String[] args) throws IOException {
    String vectorsPath = args.length > 0 ? args[0] : env("CASHGATE_SIGNING_VECTORS", "");
    Map<String, Object> summary = new LinkedHashMap<>();
    summary.put("language", "java");
    summary.put("ok", false);
    if (vectorsPath.isEmpty()) {
      summary.put("error", "give the signing vectors file as the first argument or in CASHGATE_SIGNING_VECTORS");
      System.out.println(json(summary));
      System.exit(2);
    }
    Map<String, Object> vectors = checkVectors(Path.of(vectorsPath));
    summary.put("vectors", vectors);
    boolean vectorsOk = ((List<Object>) vectors.get("failures")).isEmpty();
    String baseUrl = env("CASHGATE_BASE_URL", "");
    if (baseUrl.isEmpty()) {
      summary.put("live", "skipped: CASHGATE_BASE_URL is not set");
      summary.put("ok", vectorsOk);
      System.out.println(json(summary));
      System.exit(vectorsOk ? 0 : 1);
    }
    if (!vectorsOk) {
      summary.put("error", "signing vectors do not match: not calling the server");
      System.out.println(json(summary));
      System.exit(1);
    }
    List<String> missing = new ArrayList<>();
    for (String name : List.of("CASHGATE_ACCESS_KEY", "CASHGATE_SECRET_KEY")) if (env(name, "").isEmpty()) missing.add(name);
    if (!missing.isEmpty()) {
      summary.put("error", "set " + String.join(" and ", missing));
      System.out.println(json(summary));
      System.exit(2);
    }
    Map<String, Object> config = new LinkedHashMap<>();
    config.put("baseUrl", baseUrl);
    config.put("accessKey", env("CASHGATE_ACCESS_KEY", ""));
    config.put("secretKey", env("CASHGATE_SECRET_KEY", ""));
    config.put("callbackHost", env("CASHGATE_CALLBACK_HOST", "127.0.0.1"));
    config.put("callbackPort", Integer.parseInt(env("CASHGATE_CALLBACK_PORT", "0")));
    config.put("notifyUrl", env("CASHGATE_NOTIFY_URL", ""));
    config.put("toleranceMs", Long.parseLong(env("CASHGATE_CALLBACK_TOLERANCE_MS", "300000")));
    config.put("callbackTimeoutMs", Long.parseLong(env("CASHGATE_CALLBACK_TIMEOUT_MS", "30000")));
    boolean ok = runLive(config, summary);
    summary.put("ok", ok);
    System.out.println(json(summary));
    System.exit(ok ? 0 : 1);
  }
}
