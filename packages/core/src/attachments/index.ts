export {
  addAttachments, listAttachments, getAttachmentMetadata, getAttachmentDownload, byteString,
  attachmentTooLarge, parseAttId, contentDisposition as attachmentContentDisposition,
  type UploadedFile, type AddAttachmentsOptions, type AttachmentInfo, type AttachmentDownload, type DownloadOptions,
} from './store.js';
export { guessExt, contentTypeForExt } from './ext.js';
export type { TableQuery } from './query.js';
