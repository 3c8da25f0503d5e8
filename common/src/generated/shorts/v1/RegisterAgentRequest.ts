// Original file: protos/shorts/v1/agent.proto

import type { Capabilities as _shorts_v1_Capabilities, Capabilities__Output as _shorts_v1_Capabilities__Output } from '../../shorts/v1/Capabilities.js';

export interface RegisterAgentRequest {
  'name'?: (string);
  'capabilities'?: (_shorts_v1_Capabilities | null);
  'version'?: (string);
}

export interface RegisterAgentRequest__Output {
  'name': (string);
  'capabilities': (_shorts_v1_Capabilities__Output | null);
  'version': (string);
}
