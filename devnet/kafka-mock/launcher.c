/*
 * kafka-mock launcher: runs librdkafka's in-process mock Kafka cluster as a
 * standalone process for the integration tests and the pipeline benchmark (no
 * JVM, no Docker; devnet/kafka-mock.ts builds and starts it).
 *
 *   kafka-mock [--brokers N] [--partitions P] topic1 [topic2 ...]
 *
 * Pre-creates the topics (the mock cluster does not implement CreateTopics),
 * prints the bootstrap address list ("127.0.0.1:port,127.0.0.1:port") on one
 * line of stdout, then runs until stdin reaches EOF or SIGTERM/SIGINT arrives,
 * and destroys the cluster. Exit code 0 on a clean stop, 1 on a startup failure
 * (reason on stderr), 2 on a usage error.
 *
 * Build: gcc launcher.c -o kafka-mock -lrdkafka
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void usage(const char *argv0) {
  fprintf(stderr, "usage: %s [--brokers N] [--partitions P] topic [topic ...]\n", argv0);
}

static int parse_positive(const char *s, int *out) {
  char *end = NULL;
  long v = strtol(s, &end, 10);
  if (!s[0] || *end || v < 1 || v > 10000) return -1;
  *out = (int)v;
  return 0;
}

int main(int argc, char **argv) {
  int brokers = 1;
  int partitions = 1;
  int first_topic = argc;

  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--brokers") && i + 1 < argc) {
      if (parse_positive(argv[++i], &brokers)) {
        usage(argv[0]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--partitions") && i + 1 < argc) {
      if (parse_positive(argv[++i], &partitions)) {
        usage(argv[0]);
        return 2;
      }
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(argv[0]);
      return 0;
    } else if (!strncmp(argv[i], "--", 2)) {
      usage(argv[0]);
      return 2;
    } else {
      first_topic = i;
      break;
    }
  }
  if (first_topic >= argc) {
    usage(argv[0]);
    return 2;
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  /* The mock cluster needs an rd_kafka_t to own its threads; an idle producer
   * without bootstrap servers does nothing else. */
  char errstr[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  if (rd_kafka_conf_set(conf, "log_level", "3", errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) {
    fprintf(stderr, "kafka-mock: %s\n", errstr);
    rd_kafka_conf_destroy(conf);
    return 1;
  }
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (!rk) {
    fprintf(stderr, "kafka-mock: rd_kafka_new failed: %s\n", errstr);
    return 1;
  }

  rd_kafka_mock_cluster_t *mcluster = rd_kafka_mock_cluster_new(rk, brokers);
  if (!mcluster) {
    fprintf(stderr, "kafka-mock: rd_kafka_mock_cluster_new failed\n");
    rd_kafka_destroy(rk);
    return 1;
  }

  int replication = brokers < 3 ? brokers : 3;
  for (int i = first_topic; i < argc; i++) {
    rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(mcluster, argv[i], partitions, replication);
    if (err) {
      fprintf(stderr, "kafka-mock: creating topic %s failed: %s\n", argv[i], rd_kafka_err2str(err));
      rd_kafka_mock_cluster_destroy(mcluster);
      rd_kafka_destroy(rk);
      return 1;
    }
  }

  printf("%s\n", rd_kafka_mock_cluster_bootstraps(mcluster));
  fflush(stdout);

  /* Run until stdin closes (parent gone) or a stop signal arrives. */
  char buf[256];
  while (!stop_requested) {
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    int n = poll(&pfd, 1, 500);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n == 0) continue;
    if (pfd.revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)) {
      ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));
      if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) break;
    }
  }

  rd_kafka_mock_cluster_destroy(mcluster);
  rd_kafka_destroy(rk);
  return 0;
}
