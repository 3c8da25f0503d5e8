// Input options for every ffmpeg/ffprobe run over a file that came from a user.
//
// The protocol whitelist keeps a crafted file from making ffmpeg fetch anything over the network.
// It is not enough on its own: a "video" that is really an HLS or DASH playlist, or an ffconcat
// list, names other local files, and with the `file` protocol allowed ffmpeg would read them (on a
// shared host: another organization's media, or other jobs' files in the agent's work folder).
// So the demuxer is whitelisted too: plain containers only, nothing that refers to other files.
const MEDIA_DEMUXERS = [
  'mov,mp4,m4a,3gp,3g2,mj2',
  'matroska,webm',
  'avi',
  'flv',
  'mpegts',
  'mpeg',
  'ogg',
  'asf',
  'mxf',
  'nut',
  'wav',
  'w64',
  'aiff',
  'caf',
  'mp3',
  'aac',
  'flac',
];
// Still images: the stored ones the coordinator probes (png, jpeg, webp, gif); the renderer itself
// only ever gets a PNG (render-short turns every watermark into one).
const IMAGE_DEMUXERS = ['image2', 'png_pipe', 'jpeg_pipe', 'webp_pipe', 'gif', 'gif_pipe'];

/** `-protocol_whitelist file,pipe -format_whitelist …`, to put before each `-i` (or once for ffprobe). */
export function inputGuard(kind: 'media' | 'image' | 'media-or-image' = 'media'): string[] {
  const demuxers = kind === 'media' ? MEDIA_DEMUXERS : kind === 'image' ? IMAGE_DEMUXERS : [...MEDIA_DEMUXERS, ...IMAGE_DEMUXERS];
  return ['-protocol_whitelist', 'file,pipe', '-format_whitelist', demuxers.join(',')];
}
