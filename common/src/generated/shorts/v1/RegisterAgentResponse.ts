// Original file: protos/shorts/v1/agent.proto


export interface RegisterAgentResponse {
  'agent_id'?: (string);
  'lease_ttl_ms'?: (number);
  'heartbeat_interval_ms'?: (number);
}

export interface RegisterAgentResponse__Output {
  'agent_id': (string);
  'lease_ttl_ms': (number);
  'heartbeat_interval_ms': (number);
}
