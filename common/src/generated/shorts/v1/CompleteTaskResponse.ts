// Original file: protos/shorts/v1/agent.proto


export interface CompleteTaskResponse {
}

export interface CompleteTaskResponse__Output {
}
