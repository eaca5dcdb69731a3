/**
 * Install-wide settings of orgs, read from the environment under Grist's names (its
 * app/server/lib/gristSettings.ts and InstallAdmin.ts): who may create team sites, whether personal
 * orgs exist, and who the install admin is.
 */

/** How orgs behave on this install (docs/operations.md, "Orgs"). */
export interface OrgSettings {
  /** GRIST_ORG_CREATION_ANYONE (default true): false lets only the install admin create team sites. */
  orgCreationAnyone: boolean;
  /**
   * GRIST_PERSONAL_ORGS (default: GRIST_ORG_CREATION_ANYONE's value): false makes no personal org
   * for new users and treats existing ones as not existing (SPEC §1.1).
   */
  personalOrgs: boolean;
  /**
   * The install admin's email, lower-cased: GRIST_ADMIN_EMAIL, else GRIST_DEFAULT_EMAIL, else
   * GRIST_SUPPORT_EMAIL (default `support@getgrist.com`), as Grist's SimpleInstallAdmin picks it.
   */
  adminEmail: string;
}

/** Grist reads a boolean setting as true only for `1`, `on`, `true` or `yes` (gutil's isAffirmative). */
function flag(value: string | undefined, dflt: boolean): boolean {
  return value === undefined ? dflt : ['1', 'on', 'true', 'yes'].includes(value.toLowerCase());
}

/** The org settings an environment gives, under Grist's names and with Grist's defaults. */
export function orgSettingsFromEnv(env: Record<string, string | undefined>): OrgSettings {
  const orgCreationAnyone = flag(env.GRIST_ORG_CREATION_ANYONE, true);
  return {
    orgCreationAnyone,
    personalOrgs: flag(env.GRIST_PERSONAL_ORGS, orgCreationAnyone),
    // Empty values fall through, as Grist's `||` chain does. GRISTLITE_DEFAULT_EMAIL is not in the
    // chain (D141): it always names a user (you@example.com when unset), so it would make one admin.
    adminEmail: (
      env.GRIST_ADMIN_EMAIL ||
      env.GRIST_DEFAULT_EMAIL ||
      env.GRIST_SUPPORT_EMAIL ||
      'support@getgrist.com'
    ).toLowerCase(),
  };
}

/** The default settings: Grist's defaults with no environment. */
export const DEFAULT_ORG_SETTINGS: OrgSettings = orgSettingsFromEnv({});
