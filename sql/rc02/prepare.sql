-- RC02 scope: executions by executed_at, venue fills by their mapped UTC time.
CREATE OR REPLACE TEMP VIEW rc02_executions AS SELECT * FROM executions WHERE in_window(executed_at);
CREATE OR REPLACE TEMP VIEW rc02_venue_fills AS SELECT * FROM venue_fills WHERE in_window(venue_time_utc);
