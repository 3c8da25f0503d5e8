// The named schemas of the OpenAPI document (`components.schemas`): every resource the API answers
// with, under the name a client generator gives its type. Naming a zod schema here makes
// z.toJSONSchema put it in `$defs` and refer to it wherever it appears; the document builder
// (coordinator/src/api/http.ts) moves those to `#/components/schemas/<name>`.
import { z } from 'zod';
import { reframeSchema } from '../reframe/schema.js';
import {
  apiKeyJobSchema,
  apiKeyShortSchema,
  bearerJobSchema,
  cancelledJobSchema,
  createdJobSchema,
  deletedJobSchema,
  jobListItemSchema,
  jobListSchema,
  jobSchema,
  shortSchema,
} from './jobs.js';
import { createdRenderSchema, listedRenderSchema, renderListSchema, renderStatusSchema } from './renders.js';
import { deletedFileSchema, fileListSchema, fileViewSchema, storageSummarySchema } from './files.js';
import { brandPresetSchema, deletedPresetSchema } from './brandings.js';
import { socialPostListSchema, socialPostSchema, socialProfileSchema, socialSettingsSchema } from './social.js';
import { apiKeyListSchema, apiKeyViewSchema, issuedApiKeySchema } from './api-keys.js';
import { organizationSettingsSchema, sessionViewSchema } from './sessions.js';

export const COMPONENT_SCHEMAS: Record<string, z.ZodType> = {
  Job: jobSchema,
  JobApiKeyForm: apiKeyJobSchema,
  JobBearerForm: bearerJobSchema,
  Short: shortSchema,
  ShortApiKeyForm: apiKeyShortSchema,
  Reframe: reframeSchema,
  JobListItem: jobListItemSchema,
  JobList: jobListSchema,
  CreatedJob: createdJobSchema,
  CancelledJob: cancelledJobSchema,
  DeletedJob: deletedJobSchema,
  Render: renderStatusSchema,
  RenderListItem: listedRenderSchema,
  RenderList: renderListSchema,
  CreatedRender: createdRenderSchema,
  File: fileViewSchema,
  StorageSummary: storageSummarySchema,
  FileList: fileListSchema,
  DeletedFile: deletedFileSchema,
  BrandPreset: brandPresetSchema,
  DeletedBrandPreset: deletedPresetSchema,
  SocialSettings: socialSettingsSchema,
  SocialPost: socialPostSchema,
  SocialPostList: socialPostListSchema,
  SocialProfile: socialProfileSchema,
  ApiKey: apiKeyViewSchema,
  ApiKeyList: apiKeyListSchema,
  IssuedApiKey: issuedApiKeySchema,
  Session: sessionViewSchema,
  OrganizationSettings: organizationSettingsSchema,
};

for (const [id, schema] of Object.entries(COMPONENT_SCHEMAS)) {
  if (z.globalRegistry.get(schema)?.id === id) continue;
  z.globalRegistry.add(schema, { ...z.globalRegistry.get(schema), id });
}
