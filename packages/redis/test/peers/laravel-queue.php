<?php
// Laravel's own RedisQueue (Debian's php-illuminate-queue) as a peer of the zset
// layout tests: one action per run, JSON on stdout (bodies base64).
//
//   php laravel-queue.php '<json>'   with {"url": "redis://host:port", "prefix": "", "retryAfter": 60,
//                                          "action": "push|later|pop", "queue": "...",
//                                          "payload": "<base64>", "delay": 2, "then": "delete|release|keep"}

require_once 'Illuminate/Container/autoload.php';
require_once 'Illuminate/Queue/autoload.php';
require_once 'Illuminate/Redis/autoload.php';

use Illuminate\Container\Container;
use Illuminate\Queue\RedisQueue;
use Illuminate\Redis\RedisManager;

$args = json_decode($argv[1], true, 512, JSON_THROW_ON_ERROR);
$url = parse_url($args['url']);
$redis = new RedisManager(new Container(), 'phpredis', [
    'default' => [
        'host' => $url['host'],
        'port' => $url['port'] ?? 6379,
        'database' => isset($url['path']) ? (int) ltrim($url['path'], '/') : 0,
        'prefix' => $args['prefix'] ?? '',
    ],
]);
$queue = new RedisQueue($redis, 'default', 'default', $args['retryAfter'] ?? 60);
$queue->setContainer(new Container());
$queue->setConnectionName('redis');

// laterRaw is protected: the peer needs it to write a raw envelope with a delay.
$later = function (int $delay, string $payload, string $name) {
    return $this->laterRaw($delay, $payload, $name);
};

switch ($args['action']) {
    case 'push':
        $queue->pushRaw(base64_decode($args['payload']), $args['queue']);
        echo json_encode(['ok' => true]);
        break;
    case 'later':
        $later->call($queue, $args['delay'], base64_decode($args['payload']), $args['queue']);
        echo json_encode(['ok' => true]);
        break;
    case 'pop':
        $job = $queue->pop($args['queue']);
        if ($job === null) {
            echo json_encode(['job' => null]);
            break;
        }
        $out = [
            'job' => base64_encode($job->getRawBody()),
            'reserved' => base64_encode($job->getReservedJob()),
            'attempts' => $job->attempts(),
        ];
        switch ($args['then'] ?? 'delete') {
            case 'delete':
                $job->delete();
                break;
            case 'release':
                $job->release($args['delay'] ?? 0);
                break;
        }
        echo json_encode($out);
        break;
    default:
        fwrite(STDERR, "unknown action\n");
        exit(2);
}
