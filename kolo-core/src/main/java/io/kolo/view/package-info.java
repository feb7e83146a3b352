/**
 * The job view (internal): what each rank publishes about itself ({@link io.kolo.view.RankSnapshot}, written by its
 * reporter to the job's rendezvous store), and what the view holder makes of it (stragglers, the page, the JSON and
 * Prometheus outputs). Exported only to the modules that serve the view.
 */
package io.kolo.view;
