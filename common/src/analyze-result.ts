// What an analyze-video task returns to the coordinator: the shape both sides share.

export interface TimedWord {
  text: string;
  start: number;
  end: number;
  confidence?: number;
}

/** A crop window over time, in source pixels; t is seconds from the short's start. */
export interface CropKeyframe {
  t: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface StoredObject {
  objectKey: string;
  sizeBytes: number;
  contentType: string;
  thumbnailKey?: string | null;
}

export interface AnalyzedShort {
  title: string;
  reason: string | null;
  startTime: number;
  endTime: number;
  startId: number | null;
  endId: number | null;
  text: string;
  crop: StoredObject | null;
  reframe: CropKeyframe[] | null;
}

export interface AnalyzeResult {
  durationSec: number;
  downloadBytes: number;
  source: StoredObject & { name: string; width: number; height: number };
  transcript: { language: string; text: string; words: TimedWord[]; backend: string };
  shorts: AnalyzedShort[];
}

/** Stage names an analyze task reports, in order. */
export const ANALYZE_STAGES = ['initiating', 'downloading', 'transcribing', 'generating_shorts', 'detecting_speakers'] as const;
