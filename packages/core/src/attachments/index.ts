export {
  addAttachments,
  listAttachments,
  getAttachmentMetadata,
  getAttachmentDownload,
  byteString,
  attachmentTooLarge,
  parseAttId,
  contentDisposition as attachmentContentDisposition,
  updateUsedAttachments,
  removeUnusedAttachments,
  verifyAttachmentFiles,
  ATTACHMENTS_EXPIRY_DAYS,
  type UploadedFile,
  type AddAttachmentsOptions,
  type AttachmentInfo,
  type AttachmentPage,
  type AttachmentDownload,
  type DownloadOptions,
  type AttachmentRow,
  type AttachmentRowWriter,
} from './store.js';
export {guessExt, contentTypeForExt} from './ext.js';
export type {TableQuery} from './query.js';
