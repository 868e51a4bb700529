/** `{verify_url}/<serial>` (SPEC.md): the public verification page under PUBLIC_URL. */
export function verifyUrl(publicUrl: string, serial: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/verify/${serial}`;
}

/** Object-store key of a certificate's PDF; keyed by serial, so every render of one certificate writes one object. */
export function pdfKeyOf(workspaceId: string, serial: string): string {
  return `certificates/${workspaceId}/${serial}.pdf`;
}
