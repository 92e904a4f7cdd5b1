/** The mock Kafka cluster the integration tests use: devnet/kafka-mock.ts (shared with the pipeline benchmark). */
export {
  hasKafkaToolchain,
  kafkaToolchainProblem,
  type MockKafka,
  type MockKafkaOptions,
  startMockKafka,
} from '../../devnet/kafka-mock.ts';
