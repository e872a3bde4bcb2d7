<?php
// Cashgate merchant API in PHP 8 (CLI, standard extensions only: no curl needed).
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

declare(strict_types=1);

// Floats (only ever from JSON numbers in a body) are written as their shortest round-trip text.
ini_set('serialize_precision', '-1');

const JSON_FLAGS = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_LINE_TERMINATORS | JSON_THROW_ON_ERROR;

final class StepError extends RuntimeException
{
}

// ---------------------------------------------------------------------------------------------
// Signing (docs/api.md "Signing a request"): body members or query parameters, plus access_key, timestamp
// and nonce; null and "" left out, never sign; sorted by key in byte order; k=v joined with &.

/** JSON objects are decoded as stdClass so that {} and [] stay apart and key order is kept. */
function parse_json(string $text): mixed
{
    return json_decode($text, false, 512, JSON_THROW_ON_ERROR);
}

/** Compact JSON, as JavaScript's JSON.stringify writes it (non-ASCII kept as is). */
function compact_json(mixed $value): string
{
    return json_encode($value, JSON_FLAGS);
}

function encode_value(mixed $value): ?string
{
    if ($value === null || $value === '') {
        return null;
    }
    if (is_string($value)) {
        return $value;
    }
    // Numbers and booleans as JSON text, objects and arrays as compact JSON.
    return compact_json($value);
}

/** @param array<string, mixed>|object|null $params */
function string_to_sign(array|object|null $params, string $accessKey, string $timestamp, string $nonce): string
{
    $entries = [];
    foreach ((array) ($params ?? []) as $key => $value) {
        $key = (string) $key;
        if ($key === 'sign') {
            continue;
        }
        $encoded = encode_value($value);
        if ($encoded !== null) {
            $entries[$key] = $encoded;
        }
    }
    foreach (['access_key' => $accessKey, 'timestamp' => $timestamp, 'nonce' => $nonce] as $key => $value) {
        $encoded = encode_value($value);
        if ($encoded === null) {
            unset($entries[$key]);
        } else {
            $entries[$key] = $encoded;
        }
    }
    $keys = array_map('strval', array_keys($entries));
    usort($keys, 'strcmp'); // byte order
    return implode('&', array_map(fn (string $key): string => $key . '=' . $entries[$key], $keys));
}

function sign_string(string $secretKey, string $text): string
{
    return base64_encode(hash_hmac('sha1', $text, $secretKey, true));
}

/** @param array<string, mixed>|object|null $params */
function compute_sign(string $secretKey, array|object|null $params, string $accessKey, string $timestamp, string $nonce): string
{
    return sign_string($secretKey, string_to_sign($params, $accessKey, $timestamp, $nonce));
}

function now_ms(): int
{
    return (int) floor(microtime(true) * 1000);
}

/**
 * Checks a callback: the access key, the sign over the raw body's members, and freshness.
 *
 * @param array<string, string> $headers lower-case names
 * @return array{ok: bool, reason: string, body?: object, ageMs?: int}
 */
function verify_callback(string $secretKey, string $accessKey, string $rawBody, array $headers, int $toleranceMs): array
{
    $missing = array_values(array_filter(['access_key', 'timestamp', 'nonce', 'sign'], fn ($n) => ($headers[$n] ?? '') === ''));
    if ($missing !== []) {
        return ['ok' => false, 'reason' => 'missing headers: ' . implode(', ', $missing)];
    }
    if ($headers['access_key'] !== $accessKey) {
        return ['ok' => false, 'reason' => "access_key {$headers['access_key']} is not ours"];
    }
    try {
        $body = parse_json($rawBody);
    } catch (JsonException $error) {
        return ['ok' => false, 'reason' => 'body is not JSON: ' . $error->getMessage()];
    }
    if (!is_object($body)) {
        return ['ok' => false, 'reason' => 'body is not a JSON object'];
    }
    $expected = compute_sign($secretKey, $body, $headers['access_key'], $headers['timestamp'], $headers['nonce']);
    if (!hash_equals($expected, $headers['sign'])) {
        return ['ok' => false, 'reason' => 'sign does not match', 'body' => $body];
    }
    if (preg_match('/^\d{13}$/', $headers['timestamp']) !== 1) {
        return ['ok' => false, 'reason' => 'timestamp is not 13-digit milliseconds', 'body' => $body];
    }
    $ageMs = now_ms() - (int) $headers['timestamp'];
    if (abs($ageMs) > $toleranceMs) {
        return ['ok' => false, 'reason' => "timestamp is $ageMs ms from now (tolerance $toleranceMs ms)", 'body' => $body, 'ageMs' => $ageMs];
    }
    return ['ok' => true, 'reason' => 'verified', 'body' => $body, 'ageMs' => $ageMs];
}

// ---------------------------------------------------------------------------------------------
// Step 1: the worked vectors.

/** @return array{total: int, passed: int, failures: list<array<string, string>>} */
function check_vectors(string $path): array
{
    $text = file_get_contents($path);
    if ($text === false) {
        throw new StepError("cannot read $path");
    }
    $fixture = parse_json($text);
    $failures = [];
    foreach ($fixture->vectors as $vector) {
        $text = string_to_sign($vector->params, $fixture->access_key, $vector->timestamp, $vector->nonce);
        $sign = sign_string($fixture->secret_key, $text);
        if ($text !== $vector->stringToSign) {
            $failures[] = ['name' => $vector->name, 'field' => 'stringToSign', 'expected' => $vector->stringToSign, 'got' => $text];
        } elseif ($sign !== $vector->sign) {
            $failures[] = ['name' => $vector->name, 'field' => 'sign', 'expected' => $vector->sign, 'got' => $sign];
        }
    }
    $total = count($fixture->vectors);
    return ['total' => $total, 'passed' => $total - count($failures), 'failures' => $failures];
}

// ---------------------------------------------------------------------------------------------
// Step 2: a signed conversation with a running Cashgate.

/**
 * One HTTP request with a stream context (redirects not followed).
 *
 * @param array<string, string> $headers
 * @return array{0: int, 1: string}
 */
function http_call(string $method, string $url, ?string $body, array $headers): array
{
    $lines = [];
    foreach ($headers as $name => $value) {
        $lines[] = "$name: $value";
    }
    $context = stream_context_create(['http' => [
        'method' => $method,
        'header' => implode("\r\n", $lines),
        'content' => $body ?? '',
        'ignore_errors' => true,
        'follow_location' => 0,
        'max_redirects' => 1,
        'timeout' => 30,
    ]]);
    $answer = @file_get_contents($url, false, $context);
    $responseHeaders = function_exists('http_get_last_response_headers') ? http_get_last_response_headers() : ($http_response_header ?? null);
    if ($answer === false || !is_array($responseHeaders) || $responseHeaders === []) {
        throw new StepError("$method $url failed: " . (error_get_last()['message'] ?? 'no answer'));
    }
    if (preg_match('#^HTTP/\S+ (\d{3})#', $responseHeaders[0], $match) !== 1) {
        throw new StepError("$method $url: no status line");
    }
    return [(int) $match[1], $answer];
}

final class Client
{
    private string $baseUrl;

    public function __construct(string $baseUrl, private string $accessKey, private string $secretKey)
    {
        $this->baseUrl = rtrim($baseUrl, '/');
    }

    public function baseUrl(): string
    {
        return $this->baseUrl;
    }

    /** @param array<string, mixed>|null $params @return array<string, string> */
    private function headers(?array $params): array
    {
        $timestamp = (string) now_ms();
        $nonce = uuid4();
        return [
            'access_key' => $this->accessKey,
            'timestamp' => $timestamp,
            'nonce' => $nonce,
            'sign' => compute_sign($this->secretKey, $params, $this->accessKey, $timestamp, $nonce),
        ];
    }

    /** @param array<string, mixed> $params */
    public function post(string $path, array $params): mixed
    {
        // The bytes sent are the JSON of exactly the map that was signed.
        $body = compact_json((object) $params);
        $headers = $this->headers($params) + ['content-type' => 'application/json;charset=utf-8'];
        return self::envelope(...http_call('POST', $this->baseUrl . $path, $body, $headers));
    }

    /** @param array<string, string> $query */
    public function get(string $path, array $query = []): mixed
    {
        $url = $this->baseUrl . $path . ($query === [] ? '' : '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986));
        return self::envelope(...http_call('GET', $url, null, $this->headers($query === [] ? null : $query)));
    }

    private static function envelope(int $status, string $raw): mixed
    {
        try {
            $envelope = parse_json($raw);
        } catch (JsonException) {
            throw new StepError("HTTP $status, not JSON: " . substr($raw, 0, 200));
        }
        if ($status !== 200 || ($envelope->code ?? null) !== '200') {
            throw new StepError("HTTP $status, code " . ($envelope->code ?? '?') . ': ' . ($envelope->msgEn ?? ''));
        }
        return $envelope->data;
    }
}

function uuid4(): string
{
    $bytes = random_bytes(16);
    $bytes[6] = chr((ord($bytes[6]) & 0x0f) | 0x40);
    $bytes[8] = chr((ord($bytes[8]) & 0x3f) | 0x80);
    return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
}

/**
 * Waits on the receiver's socket for one callback, verifies it, answers 200 only to an authentic
 * one, and returns what was received (null when the time is up).
 *
 * @param resource $server
 * @return array<string, mixed>|null
 */
function receive_callback($server, string $secretKey, string $accessKey, int $toleranceMs, float $timeoutSeconds): ?array
{
    $connection = @stream_socket_accept($server, max($timeoutSeconds, 0.001));
    if ($connection === false) {
        return null;
    }
    stream_set_timeout($connection, 10);
    $head = '';
    while (!str_contains($head, "\r\n\r\n") && !feof($connection)) {
        $chunk = fread($connection, 8192);
        if ($chunk === false || $chunk === '') {
            break;
        }
        $head .= $chunk;
    }
    [$headerBlock, $raw] = array_pad(explode("\r\n\r\n", $head, 2), 2, '');
    $headers = [];
    foreach (array_slice(explode("\r\n", $headerBlock), 1) as $line) {
        $colon = strpos($line, ':');
        if ($colon !== false) {
            $headers[strtolower(trim(substr($line, 0, $colon)))] = trim(substr($line, $colon + 1));
        }
    }
    $length = (int) ($headers['content-length'] ?? 0);
    while (strlen($raw) < $length && !feof($connection)) {
        $chunk = fread($connection, $length - strlen($raw));
        if ($chunk === false || $chunk === '') {
            break;
        }
        $raw .= $chunk;
    }
    $result = verify_callback($secretKey, $accessKey, $raw, $headers, $toleranceMs);
    $answer = $result['ok'] ? '{"code":"200","success":true}' : compact_json(['code' => '307', 'success' => false, 'msgEn' => $result['reason']]);
    $status = $result['ok'] ? '200 OK' : '401 Unauthorized';
    fwrite($connection, "HTTP/1.1 $status\r\ncontent-type: application/json\r\ncontent-length: " . strlen($answer) . "\r\nconnection: close\r\n\r\n$answer");
    fclose($connection);
    return $result + ['raw' => $raw, 'headers' => $headers, 'notifyId' => $headers['notify_id'] ?? null];
}

/** @param array<string, mixed> $config @param array<string, mixed> $summary */
function run_live(array $config, array &$summary): bool
{
    $client = new Client($config['base_url'], $config['access_key'], $config['secret_key']);
    $server = @stream_socket_server("tcp://{$config['callback_host']}:{$config['callback_port']}", $errno, $errstr);
    if ($server === false) {
        $summary['error'] = "cannot listen on {$config['callback_host']}:{$config['callback_port']}: $errstr";
        return false;
    }
    $port = (int) substr((string) strrchr((string) stream_socket_get_name($server, false), ':'), 1);
    $notifyUrl = $config['notify_url'] !== '' ? $config['notify_url'] : "http://{$config['callback_host']}:$port/cashgate/callback";
    fwrite(STDERR, "callback receiver listening on {$config['callback_host']}:$port, notifyUrl $notifyUrl\n");
    $steps = &$summary['steps'];
    try {
        $balances = $client->get('/api/v3/bra/query/balance');
        $steps['balance'] = ['ok' => true, 'currencies' => array_map(fn ($b) => $b->currencyType, $balances)];

        $externalOrderId = 'PHP-' . now_ms() . '-' . bin2hex(random_bytes(4));
        $amount = '100.50'; // money is a decimal string, never a float
        $created = $client->post('/api/v3/bra/createCollectingOrder', [
            'amount' => $amount,
            'channelType' => 'PIX',
            'externalOrderId' => $externalOrderId,
            'notifyUrl' => $notifyUrl,
            'remark' => 'Cashgate PHP example',
        ]);
        $order = $created->currencyOrderVo;
        $orderId = $order->orderId;
        $summary['orderId'] = $orderId;
        $summary['externalOrderId'] = $externalOrderId;
        if ($order->amount !== $amount || $order->orderStatusCode !== 1) {
            throw new StepError('unexpected create result: ' . compact_json($order));
        }
        $steps['create'] = ['ok' => true, 'orderId' => $orderId, 'cashierId' => $created->cashierId, 'orderStatusCode' => $order->orderStatusCode];

        $records = $client->post('/api/v3/bra/query/collectingOrder', ['externalOrderId' => $externalOrderId, 'orderId' => $orderId]);
        if (count($records) !== 1 || $records[0]->orderId !== $orderId || $records[0]->orderStatus !== 1) {
            throw new StepError('unexpected query result: ' . compact_json($records));
        }
        $steps['query'] = ['ok' => true, 'orderStatus' => $records[0]->orderStatus, 'orderAmount' => $records[0]->orderAmount];

        // The sandbox panel of the cashier page plays the payer: a form post answered with 303.
        $payUrl = $client->baseUrl() . '/cashier/' . rawurlencode($created->cashierId) . '/sandbox';
        [$status] = http_call('POST', $payUrl, 'action=paid', ['content-type' => 'application/x-www-form-urlencoded']);
        if ($status !== 303) {
            throw new StepError("sandbox pay answered HTTP $status (is CASHGATE_SANDBOX on?)");
        }
        $steps['pay'] = ['ok' => true, 'via' => 'cashier sandbox panel'];

        $deadline = microtime(true) + $config['callback_timeout_ms'] / 1000;
        while (true) {
            $remaining = $deadline - microtime(true);
            if ($remaining <= 0) {
                throw new StepError("no callback for $orderId within {$config['callback_timeout_ms']} ms");
            }
            $got = receive_callback($server, $config['secret_key'], $config['access_key'], $config['tolerance_ms'], $remaining);
            if ($got === null) {
                continue;
            }
            $body = $got['body'] ?? null;
            if (is_object($body) && isset($body->orderId) && $body->orderId !== $orderId) {
                continue; // a callback for another order
            }
            if (!$got['ok']) {
                $steps['callback'] = ['ok' => false, 'reason' => $got['reason'], 'ageMs' => $got['ageMs'] ?? null];
                throw new StepError("callback rejected: {$got['reason']}");
            }
            if ($body->orderStatusCode !== 2 || $body->orderActualAmount !== $amount) {
                throw new StepError("unexpected callback payload: {$got['raw']}");
            }
            // The same verification must refuse a body changed in transit.
            $tampered = str_replace("\"orderActualAmount\":\"$amount\"", '"orderActualAmount":"999.99"', $got['raw']);
            $tamperedCheck = verify_callback($config['secret_key'], $config['access_key'], $tampered, $got['headers'], $config['tolerance_ms']);
            $steps['callback'] = [
                'ok' => true,
                'verified' => true,
                'fresh' => true,
                'ageMs' => $got['ageMs'],
                'notifyId' => $got['notifyId'],
                'orderStatusCode' => $body->orderStatusCode,
                'orderActualAmount' => $body->orderActualAmount,
                'tamperedBodyRejected' => $tampered !== $got['raw'] && !$tamperedCheck['ok'],
            ];
            if (!$steps['callback']['tamperedBodyRejected']) {
                throw new StepError('a tampered callback body was not rejected');
            }
            break;
        }

        $records = $client->post('/api/v3/bra/query/collectingOrder', ['externalOrderId' => $externalOrderId, 'orderId' => $orderId]);
        if ($records[0]->orderStatus !== 2) {
            throw new StepError('order not paid after the callback: ' . compact_json($records[0]));
        }
        $steps['queryAfterPayment'] = ['ok' => true, 'orderStatus' => 2, 'orderActualAmount' => $records[0]->orderActualAmount];
        return true;
    } catch (StepError | JsonException | Error $error) {
        $summary['error'] = $error instanceof StepError ? $error->getMessage() : get_class($error) . ': ' . $error->getMessage();
        return false;
    } finally {
        fclose($server);
    }
}

/** @param list<string> $argv */
function main(array $argv): int
{
    $vectorsPath = $argv[1] ?? (getenv('CASHGATE_SIGNING_VECTORS') ?: '');
    $summary = ['language' => 'php', 'ok' => false];
    $print = function () use (&$summary): void {
        echo compact_json($summary), "\n";
    };
    if ($vectorsPath === '') {
        $summary['error'] = 'give the signing vectors file as the first argument or in CASHGATE_SIGNING_VECTORS';
        $print();
        return 2;
    }
    $summary['vectors'] = check_vectors($vectorsPath);
    $vectorsOk = $summary['vectors']['failures'] === [];
    $baseUrl = getenv('CASHGATE_BASE_URL') ?: '';
    if ($baseUrl === '') {
        $summary['live'] = 'skipped: CASHGATE_BASE_URL is not set';
        $summary['ok'] = $vectorsOk;
        $print();
        return $vectorsOk ? 0 : 1;
    }
    if (!$vectorsOk) {
        $summary['error'] = 'signing vectors do not match: not calling the server';
        $print();
        return 1;
    }
    $missing = array_values(array_filter(['CASHGATE_ACCESS_KEY', 'CASHGATE_SECRET_KEY'], fn ($n) => (getenv($n) ?: '') === ''));
    if ($missing !== []) {
        $summary['error'] = 'set ' . implode(' and ', $missing);
        $print();
        return 2;
    }
    $config = [
        'base_url' => $baseUrl,
        'access_key' => getenv('CASHGATE_ACCESS_KEY'),
        'secret_key' => getenv('CASHGATE_SECRET_KEY'),
        'callback_host' => getenv('CASHGATE_CALLBACK_HOST') ?: '127.0.0.1',
        'callback_port' => (int) (getenv('CASHGATE_CALLBACK_PORT') ?: '0'),
        'notify_url' => getenv('CASHGATE_NOTIFY_URL') ?: '',
        'tolerance_ms' => (int) (getenv('CASHGATE_CALLBACK_TOLERANCE_MS') ?: '300000'),
        'callback_timeout_ms' => (int) (getenv('CASHGATE_CALLBACK_TIMEOUT_MS') ?: '30000'),
    ];
    $summary['steps'] = [];
    $summary['ok'] = run_live($config, $summary);
    $print();
    return $summary['ok'] ? 0 : 1;
}

exit(main($argv));
