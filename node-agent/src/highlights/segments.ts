// Sentences now live in common (the coordinator re-makes titles from corrected words with them).
export { bareWord, segmentSentences, type SegmentOptions, type Sentence } from '@shorts/common/text/sentences';
