/** One validation issue of SPEC.md "Errors": what is wrong (`code`), where (`path`) and why (`message`). */
export interface Issue {
  code: string;
  path: (string | number)[];
  message: string;
}
