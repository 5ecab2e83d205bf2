from django.urls import path

from . import grid, views

app_name = "annotation"

urlpatterns = [
    path("", views.my_work, name="my_work"),
    path("languages/", views.languages, name="languages"),
    path("<int:assignment_id>/", views.resume, name="resume"),
    path("<int:assignment_id>/<int:position>/", views.judge, name="judge"),
    path("<int:assignment_id>/grid/<int:position>/", grid.grid, name="grid"),
    path("<int:assignment_id>/documents/<int:document_id>/", views.open_document, name="document"),
    path("<int:assignment_id>/entries/<int:entry_id>/image/", views.image, name="image"),
    path("<int:assignment_id>/entries/<int:entry_id>/thumbnail/", views.image, {"thumbnail": True}, name="thumbnail"),
]
