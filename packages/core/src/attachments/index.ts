export {
  addAttachments,
  listAttachments,
  getAttachmentMetadata,
  getAttachmentDownload,
  attachmentFile,
  attachmentDownloadOf,
  attachmentLocations,
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
  type AttachmentFile,
} from './store.js';
export {AttachmentStores, DirectoryAttachmentStore, storeFileName, type AttachmentStore} from './external.js';
export {
  DocAttachmentFiles,
  archiveEntryIdent,
  attachmentStoreIdOf,
  readDocSettings,
  type ArchiveUploadResult,
  type AttachmentStoreStatus,
  type DocFilesContext,
} from './files.js';
export {guessExt, contentTypeForExt} from './ext.js';
export type {TableQuery} from './query.js';
