// Original file: protos/shorts/v1/agent.proto


export interface ReleaseTaskResponse {
}

export interface ReleaseTaskResponse__Output {
}
