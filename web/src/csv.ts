// RFC 4180 CSV: quoted fields may hold commas, doubled quotes and line breaks.

export interface Table {
  header: string[];
  rows: string[][];
}

export function parseCsv(text: string): Table {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  let i = 0;
  // A byte-order mark would otherwise become part of the first column's name.
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
    } else if (c === '"' && field === "") {
      quoted = true;
    } else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      record.push(field);
      records.push(record);
      record = [];
      field = "";
    } else {
      field += c;
    }
  }
  if (quoted) throw new Error("CSV: a quoted field is not closed");
  if (field !== "" || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  // Blank lines carry no row.
  const nonEmpty = records.filter((r) => !(r.length === 1 && r[0].trim() === ""));
  if (nonEmpty.length === 0) throw new Error("CSV: the file is empty");
  const header = nonEmpty[0].map((s) => s.trim());
  const rows = nonEmpty.slice(1);
  rows.forEach((r, k) => {
    if (r.length !== header.length)
      throw new Error(`CSV: row ${k + 1} has ${r.length} fields, the header ${header.length}`);
  });
  return { header, rows };
}
