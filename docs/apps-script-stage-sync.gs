/**
 * leadrelay: post a row's stage change when the stage cell is edited.
 *
 * Sheet layout (row 1 is the header): A leadgen_id, B email, C phone, D stage,
 * E value, F currency, G status (written by this script).
 *
 * Setup: Extensions -> Apps Script, paste this file, then Project Settings ->
 * Script properties: LEADRELAY_URL = https://<host>/api/v1/stage-events and
 * LEADRELAY_API_TOKEN = <the service's LEADRELAY_API_TOKEN>. Add an installable
 * trigger: onStageEdit, From spreadsheet, On edit (a simple onEdit trigger may
 * not call external services).
 */
var STAGE_COLUMN = 4;
var STATUS_COLUMN = 7;

function onStageEdit(e) {
  var range = e.range;
  if (range.getColumn() !== STAGE_COLUMN || range.getRow() === 1) return;
  var sheet = range.getSheet();
  var row = sheet.getRange(range.getRow(), 1, 1, 6).getValues()[0];
  var item = {
    leadgen_id: String(row[0] || ''),
    email: String(row[1] || ''),
    phone: String(row[2] || ''),
    stage: String(row[3] || ''),
    occurred_at: new Date().toISOString(),  // when the cell changed
    lead_event_source: 'Google Sheets'
  };
  if (row[4] !== '') { item.value = Number(row[4]); item.currency = String(row[5] || ''); }
  Object.keys(item).forEach(function (k) { if (item[k] === '') delete item[k]; });

  var props = PropertiesService.getScriptProperties();
  var response = UrlFetchApp.fetch(props.getProperty('LEADRELAY_URL'), {
    method: 'post',
    contentType: 'application/json',
    headers: { Authorization: 'Bearer ' + props.getProperty('LEADRELAY_API_TOKEN') },
    payload: JSON.stringify(item),
    muteHttpExceptions: true
  });
  var status = 'HTTP ' + response.getResponseCode();
  try {
    var result = JSON.parse(response.getContentText()).results[0];
    status = result.status + (result.reason ? ': ' + result.reason + ' ' + (result.detail || '') : '');
  } catch (err) { /* keep the HTTP status */ }
  sheet.getRange(range.getRow(), STATUS_COLUMN).setValue(status);
}
