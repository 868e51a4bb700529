import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { identityRoutes } from './identities.routes.js';
import { meRoutes } from './me.routes.js';
import { webhookRoutes } from './webhooks.routes.js';
import { courseImportRoutes } from './course-import.routes.js';
import { scormImportRoutes } from './scorm-import.routes.js';
import { courseRoutes } from './courses.routes.js';
import { themeRoutes } from './themes.routes.js';
import { certificateTemplateRoutes } from './certificates.routes.js';
import { collectionRoutes } from './collections.routes.js';
import { translationRoutes } from './translations.routes.js';
import { completionRoutes } from './completions.routes.js';
import { embedKeyRoutes } from './embed-keys.routes.js';
import type { PlayerKeys } from '../player-keys.js';
import { issuedCertificateRoutes } from './issued-certificates.routes.js';
import { scormExportRoutes } from './scorm-export.routes.js';
import { playerSettingsRoutes } from './player-settings.routes.js';
import { usageRoutes } from './usage.routes.js';
import { generationRoutes } from './generation.routes.js';
import { mediaRoutes } from './media.routes.js';

/** Every keyed /api/v1 route module. Add new modules here. */
export function registerApiRoutes(api: ApiRouter, deps: RouteDeps, player: { keys: () => PlayerKeys }): void {
  const em = () => deps.orm.em.fork();
  meRoutes(api, deps);
  identityRoutes(api, deps);
  webhookRoutes(api, deps);
  courseImportRoutes(api, deps);
  scormImportRoutes(api, deps);
  courseRoutes(api, deps);
  scormExportRoutes(api, { ...deps, playerKeys: player.keys });
  themeRoutes(api, deps);
  certificateTemplateRoutes(api, deps);
  collectionRoutes(api, deps);
  translationRoutes(api, deps);
  completionRoutes(api, {
    em,
    certificates: { ...deps, onEvent: () => deps.relay.kick() },
    publicUrl: deps.cfg.PUBLIC_URL,
    answerKeySecret: () => player.keys().answerKeySecret,
  });
  embedKeyRoutes(api, { em, secrets: () => player.keys().secrets });
  issuedCertificateRoutes(api, deps);
  playerSettingsRoutes(api, { em });
  usageRoutes(api, { em });
  generationRoutes(api, deps);
  mediaRoutes(api, deps);
}
