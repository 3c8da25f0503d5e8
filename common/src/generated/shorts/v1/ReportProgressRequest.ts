// Original file: protos/shorts/v1/agent.proto


export interface ReportProgressRequest {
  'task_id'?: (string);
  'lease_token'?: (string);
  /**
   * 0.0 to 1.0 of the whole task.
   */
  'progress'?: (number | string);
  'stage'?: (string);
  'message'?: (string);
  /**
   * Facts the task learned on the way, as a JSON object (analyze-video: durationSec and
   * downloadBytes once the source is probed). Carried by every report until one is answered, so a
   * report that is lost or coalesced loses nothing; the coordinator may refuse the task on them (the
   * answer then asks for a cancel). Handlers must be idempotent: a re-leased task reports again.
   */
  'facts_json'?: (string);
}

export interface ReportProgressRequest__Output {
  'task_id': (string);
  'lease_token': (string);
  /**
   * 0.0 to 1.0 of the whole task.
   */
  'progress': (number);
  'stage': (string);
  'message': (string);
  /**
   * Facts the task learned on the way, as a JSON object (analyze-video: durationSec and
   * downloadBytes once the source is probed). Carried by every report until one is answered, so a
   * report that is lost or coalesced loses nothing; the coordinator may refuse the task on them (the
   * answer then asks for a cancel). Handlers must be idempotent: a re-leased task reports again.
   */
  'facts_json': (string);
}
